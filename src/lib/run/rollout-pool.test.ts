import { describe, expect, it } from 'vitest';
import type { EngineRunInit, RolloutInit, RolloutStats } from '../../../workers/rollout.worker';
import { DEFAULT_MODEL_ARGS } from '../policy/config';
import { defaultRunConfig, withOverrides } from '../config/run-config';
import { instantRollout, instantTrainer } from './fakes';
import { assemblePipeline } from './pipeline';
import { codePoolWorkload, rolloutPool, type RolloutHost } from './rollout-pool';

const until = async (ok: () => boolean, ms = 5_000) => {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > ms) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

/** A rollout worker that records how the pool drove it; `fails` makes its start throw. */
class FakeHost implements RolloutHost {
  prepared: RolloutInit[] = [];
  joined: EngineRunInit[] = [];
  terminated = false;
  private readonly port = instantRollout(true);
  constructor(
    readonly crash: (message: string) => void,
    private readonly fails = false,
  ) {}
  async prepare(init: RolloutInit): Promise<{ backend: string }> {
    this.prepared.push(init);
    if (this.fails) throw new Error('no backend');
    return { backend: 'wasm' };
  }
  async join(run: EngineRunInit): Promise<{ version: number }> {
    this.joined.push(run);
    return { version: 0 };
  }
  terminate(): void {
    this.terminated = true;
  }
  readonly api: RolloutHost['api'] = {
    stats: async () => ({}) as RolloutStats,
    play: (job) => this.port.play(job),
    abort: (jobId) => this.port.abort(jobId),
    debugFault: async () => undefined,
    startCustom: async () => {
      throw new Error('a code run never joins a custom training');
    },
    playCustom: async () => {
      throw new Error('a code run never plays a custom job');
    },
    abortCustom: async () => undefined,
  };
}

function fixture(failFirst = 0) {
  const settings = withOverrides(defaultRunConfig(2), { pipeline: { workers: 2, eta: 1 }, seed: 7 });
  const { pipeline, lanes } = assemblePipeline(
    { runId: 'run-p', settings },
    { trainer: instantTrainer(), hooks: { onStep: () => undefined, onError: () => undefined } },
  );
  const hosts: FakeHost[] = [];
  const heard = { backends: [] as string[], notices: [] as string[], errors: [] as string[] };
  const pool = rolloutPool(
    lanes,
    pipeline,
    codePoolWorkload('run-p', settings),
    (_name: string, onCrash: (message: string) => void) => {
      const h = new FakeHost(onCrash, hosts.length < failFirst);
      hosts.push(h);
      return h;
    },
    {
      push: () => undefined,
      backend: (b) => heard.backends.push(b),
      notice: (m) => heard.notices.push(m),
      error: (m) => heard.errors.push(m),
    },
  );
  return { settings, pipeline, pool, hosts, heard };
}

describe('the rollout worker pool of a code run', () => {
  it('prepares a worker per lane with the run’s model and seed, and joins each to its lane', async () => {
    const f = fixture();
    f.pipeline.start();
    await f.pool.start();
    const live = f.pool.workers();
    expect(live.map((w) => w.lane).sort()).toEqual(['rollout-0', 'rollout-1']);
    const joined = f.hosts.flatMap((h) => h.joined).sort((a, b) => a.lane.localeCompare(b.lane));
    const rows = f.settings.pipeline.slotsPerWorker * f.settings.learner.groupSize;
    expect(joined).toEqual([
      expect.objectContaining({ runId: 'run-p', lane: 'rollout-0', rows, seed: 7 * 31 }),
      expect.objectContaining({ runId: 'run-p', lane: 'rollout-1', rows, seed: 7 * 31 + 1 }),
    ]);
    expect(f.hosts[0]?.prepared[0]).toMatchObject({ model: DEFAULT_MODEL_ARGS, seed: 7 });
    expect(f.heard.backends).toContain('wasm');
    f.pipeline.stop();
    f.pool.close();
    expect(f.hosts.length).toBe(3); // a lane each, and a spare
    await until(() => f.hosts.every((h) => h.terminated)); // the spare once it has started
  });

  it('replaces a worker that crashed, saying so, and terminates one whose start failed', async () => {
    const f = fixture(1);
    f.pipeline.start();
    await f.pool.start();
    // The first worker's start failed: it was terminated, and another took its place.
    expect(f.hosts[0]?.terminated).toBe(true);
    expect(f.pool.workers()).toHaveLength(2);
    const victim = f.pool.workers().find((w) => w.lane === 'rollout-0');
    const host = f.hosts.find((h) => victim && h.api === victim.worker.host.api);
    host?.crash('boom');
    await until(() => f.heard.notices.length > 0);
    expect(f.heard.notices[0]).toMatch(
      /^rollout-0 crashed: .*boom.*; replacing it, its episodes in flight go back to the queue\.$/,
    );
    expect(f.pool.faults.map((x) => [x.lane, x.reason])).toEqual([['rollout-0', 'crashed']]);
    await until(() => f.pool.workers().some((w) => w.lane === 'rollout-0' && w.worker.host !== host));
    expect(f.heard.errors).toEqual([]);
    f.pipeline.stop();
    f.pool.close();
  });
});
