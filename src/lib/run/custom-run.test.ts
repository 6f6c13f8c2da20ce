import { describe, expect, it, vi } from 'vitest';
import { METRICS } from '../pipeline/controller.fakes';
import type { CustomEnvSpec } from '../custom/env';
import { fakeTrajectory } from '../custom/fixture';
import { customGroup, type CustomTrajectory } from '../custom/workload';
import { now, type TimelineEvent } from '../pipeline/events';
import type { PlayedGroup, RolloutJob } from '../pipeline/types';
import type { MlpSnapshot } from '../policy/mlp';
import { DEFAULT_CUSTOM_TRAIN, type CustomTrainConfig } from '../custom/config';
import type { CustomRunResult } from '../storage/db';
import type { CustomEnd, CustomRunStore, ResumeStart } from './custom-catalog';
import type { RolloutStats } from '../../../workers/rollout.worker';
import type { CustomTrainerApi } from './custom-ports';
import {
  CustomRun,
  type CustomRunEvent,
  type CustomStart,
  type CustomTrainerPort,
  type TrainerStatusName,
} from './custom-run';
import { MEASURER_NAME, STOPPED_EARLY, type CustomRolloutWorker } from './custom-session';
import { statusOf, type LeaseState, type TrainerHolder } from './trainer-lease';

const SPEC: CustomEnvSpec = { observations: 1, actions: 2, maxSteps: 20 };
const SNAPSHOT: MlpSnapshot = {
  args: { inputs: 1, hidden: 4, actions: 2 },
  w1: new Float32Array(4),
  b1: new Float32Array(4),
  wp: new Float32Array(8),
  bp: new Float32Array(2),
};
const never = <T>() => new Promise<T>(() => undefined);

interface Gates {
  opening: Promise<void>;
  measuring: Promise<void>;
}

/** Versions the fake trainer stored (the store), announced to every joined worker. */
class FakeStore0 {
  versions: number[] = [];
  listeners: ((v: number) => void)[] = [];
  newest = (): number => this.versions.at(-1) ?? -1;
  announce(v: number): void {
    this.versions.push(v);
    for (const l of this.listeners) l(v);
  }
}

/** A rollout worker whose environment gives 5 for random actions, 10 untrained, 100 trained. */
class FakeRollout implements CustomRolloutWorker {
  /** The newest version it adopted. */
  policy = -1;
  seeds: number[] = [];
  lanes: string[] = [];
  terminated = false;
  constructor(
    readonly name: string,
    /** What opening the environment and measuring the trained policy wait on. */
    private readonly gates: Gates,
    private readonly versions: FakeStore0,
  ) {}
  prepare = async () => ({ backend: 'fake' });
  join = () => Promise.reject(new Error('a code run only'));
  readonly api: CustomRolloutWorker['api'] = {
    openCustomEnv: async (_code: string, seed: number) => {
      this.seeds.push(seed);
      return { spec: SPEC };
    },
    customRandomReturn: async (onEpisode?: (done: number) => void) => {
      onEpisode?.(1);
      await this.gates.opening;
      return 5;
    },
    adoptStoredCustom: async () => (this.policy = Math.max(this.policy, this.versions.newest())),
    customReturn: async (_episodes: number, greedy: boolean) => {
      if (greedy) await this.gates.measuring;
      return greedy ? 100 : 10;
    },
    startCustom: async (init) => {
      this.seeds.push(init.seed);
      this.lanes.push(init.lane);
      this.versions.listeners.push((v) => (this.policy = Math.max(this.policy, v)));
      return { version: (this.policy = this.versions.newest()), spec: SPEC };
    },
    playCustom: async (job: RolloutJob): Promise<PlayedGroup<CustomTrajectory>> => {
      await new Promise((r) => setTimeout(r, 1));
      const trajectories = Array.from({ length: job.samples }, () => {
        const t = fakeTrajectory([1, 1, 1], [-0.7, -0.7, -0.7]);
        return { ...t, versions: t.versions.map(() => this.policy) };
      });
      return customGroup(job.jobId, { trajectories, interrupted: 0 }, now());
    },
    abortCustom: async () => undefined,
    stats: async () => ({}) as RolloutStats,
    play: () => Promise.reject(new Error('a code run only')),
    abort: async () => undefined,
    debugFault: async () => undefined,
  };
  terminate(): void {
    this.terminated = true;
  }
}

/** The trainer's lease: ready, held by one holder at a time. */
class FakeLease {
  state: LeaseState = { phase: 'ready', holder: null, error: null };
  acquire(holder: TrainerHolder): boolean {
    if (this.state.phase !== 'ready' || this.state.holder !== null) return false;
    this.state = { ...this.state, holder };
    return true;
  }
  release(holder: TrainerHolder): void {
    if (this.state.holder === holder) this.state = { ...this.state, holder: null };
  }
}

/** The trainer worker: it stores and announces every version it publishes; `answers` false: it hangs. */
class FakeTrainer implements CustomTrainerPort {
  readonly lease = new FakeLease();
  get status(): TrainerStatusName {
    return statusOf(this.lease.state);
  }
  published: number[] = [];
  restarts = 0;
  answers = true;
  crashListener: ((message: string) => void) | null = null;
  eventListener: ((events: TimelineEvent[]) => void) | null = null;
  resumedAt = { version: 3, args: SNAPSHOT.args };
  constructor(private readonly versions: FakeStore0) {}
  private publish(version: number): { version: number; publishedAt: number } {
    this.published.push(version);
    this.versions.announce(version);
    this.eventListener?.([{ lane: 'store', kind: 'publish', t0: 0, t1: 0, version }]);
    return { version, publishedAt: 0 };
  }
  readonly api: CustomTrainerApi = {
    initCustom: async () => undefined,
    resumeCustom: async () => {
      this.versions.versions.push(this.resumedAt.version);
      return this.resumedAt;
    },
    publishCustom: async (version: number) => this.publish(version),
    trainAndPublishCustom: async (_batch, info) => {
      this.eventListener?.([
        { lane: 'trainer', kind: 'train-step', t0: 0, t1: 0, version: info.fromVersion },
      ]);
      const { version, publishedAt } = this.publish(info.fromVersion + 1);
      return { version, metrics: METRICS, startedAt: 0, publishedAt };
    },
    stats: () => (this.answers ? Promise.resolve({ at: 0, step: 0, version: 0 }) : never()),
  };
  onCrash(listener: (message: string) => void): () => void {
    this.crashListener = listener;
    return () => (this.crashListener = null);
  }
  onEvents(listener: (events: TimelineEvent[]) => void): () => void {
    this.eventListener = listener;
    return () => (this.eventListener = null);
  }
  async restart(): Promise<void> {
    this.restarts += 1;
  }
}

/** The catalog as a training sees it: locks, the stored resume, baselines and ends recorded. */
class FakeStore implements CustomRunStore {
  elsewhere = new Set<string>();
  held = new Set<string>();
  stored: ResumeStart | null = null;
  baselines: [string, CustomRunResult][] = [];
  settled: { runId: string; resumed: ResumeStart | null; end: CustomEnd }[] = [];
  async hold(runId: string, until: Promise<unknown>): Promise<boolean> {
    if (this.elsewhere.has(runId)) return false;
    this.held.add(runId);
    void until.finally(() => this.held.delete(runId));
    return true;
  }
  async show(): Promise<ResumeStart> {
    if (!this.stored) throw new Error('it is no longer stored (deleted?)');
    return this.stored;
  }
  async storeBaselines(runId: string, baselines: CustomRunResult): Promise<void> {
    this.baselines.push([runId, baselines]);
  }
  async settle(runId: string, resumed: ResumeStart | null, end: CustomEnd): Promise<void> {
    this.settled.push({ runId, resumed, end });
  }
}

const CONFIG: CustomTrainConfig = { ...DEFAULT_CUSTOM_TRAIN, iterations: 3, eta: 0, workers: 2 };
const NEW: CustomStart = { kind: 'new', config: CONFIG, code: 'env' };

function lab(gates: Partial<Gates> = {}) {
  const open: Gates = { opening: Promise.resolve(), measuring: Promise.resolve(), ...gates };
  const versions = new FakeStore0();
  const trainer = new FakeTrainer(versions);
  const store = new FakeStore();
  const bridges: FakeRollout[] = [];
  const crash: ((message: string) => void)[] = [];
  let refreshes = 0;
  const run = new CustomRun({
    trainer,
    catalog: store,
    rolloutBridge: (name, onCrash) => {
      const b = new FakeRollout(name, open, versions);
      bridges.push(b);
      crash.push(onCrash);
      return b;
    },
    newRunId: () => 'custom-t',
    refresh: async () => void (refreshes += 1),
  });
  const events: CustomRunEvent[] = [];
  run.subscribe((e) => events.push(e));
  const of = <K extends CustomRunEvent['type']>(type: K) =>
    events.filter((e): e is Extract<CustomRunEvent, { type: K }> => e.type === type);
  return {
    run,
    trainer,
    store,
    bridges,
    crash,
    events,
    refreshes: () => refreshes,
    states: () => of('state').map((e) => e.state),
    of,
  };
}

/** The pool workers that joined a lane: lane, environment seed, version held; by lane. */
const lanesOf = (pool: readonly FakeRollout[]) =>
  pool
    .filter((b) => b.lanes.length > 0)
    .map((b) => [b.lanes[0], b.seeds[0], b.policy])
    .sort((a, b) => String(a[0]).localeCompare(String(b[0])));

describe('a custom run', () => {
  it('trains a fresh policy to its iterations, publishing each version to every worker, then measures it', async () => {
    const l = lab();
    const holders: (string | null)[] = [];
    l.run.subscribe((e) => e.type === 'step' && holders.push(l.trainer.lease.state.holder));
    await l.run.train(NEW);
    expect(l.states()).toEqual(['starting', 'running', 'idle']);
    expect(holders).toEqual(['custom', 'custom', 'custom']); // it holds the trainer's lease while it trains
    expect(l.of('begin')).toEqual([{ type: 'begin', asked: 3 }]);
    expect(l.of('step').map((e) => e.report.version)).toEqual([1, 2, 3]);
    // Version 0 (the untrained policy) first, then one per update; every worker holds the newest.
    expect(l.trainer.published).toEqual([0, 1, 2, 3]);
    // The measuring worker, then the pool's: a worker per lane (and a spare), each joined to the
    // training on its lane's seed and holding every version announced.
    const [measurer, ...pool] = l.bridges;
    expect([measurer?.name, measurer?.seeds, measurer?.policy]).toEqual([MEASURER_NAME, [CONFIG.seed], 3]);
    expect(pool.every((b) => b.name === 'rollout-custom')).toBe(true);
    expect(lanesOf(pool)).toEqual([
      ['rollout-0', CONFIG.seed, 3],
      ['rollout-1', CONFIG.seed + 1, 3],
    ]);
    expect(l.of('report').map((e) => e.report)).toEqual([
      { spec: SPEC, iterations: 3, randomReturn: 5, untrainedReturn: 10, trainedReturn: 100 },
    ]);
    expect(l.store.baselines).toEqual([['custom-t', { randomReturn: 5, untrainedReturn: 10 }]]);
    expect(l.store.settled).toMatchObject([
      {
        runId: 'custom-t',
        resumed: null,
        end: {
          trained: true,
          failure: null,
          result: { randomReturn: 5, untrainedReturn: 10, trainedReturn: 100 },
        },
      },
    ]);
    const timeline = l.of('timeline').at(-1)?.events ?? [];
    expect(timeline.filter((e) => e.kind === 'train-step')).toHaveLength(3);
    expect(new Set(timeline.filter((e) => e.kind === 'episode').map((e) => e.lane))).toEqual(
      new Set(['rollout-0', 'rollout-1']),
    );
    // It lets go of everything it held.
    expect(l.bridges.every((b) => b.terminated)).toBe(true);
    expect([l.trainer.status, l.trainer.crashListener, l.store.held.size]).toEqual(['ready', null, 0]);
    expect(l.of('phase').at(-1)?.phase).toBeNull();
    expect(l.run.runId).toBeNull();
  });

  it('stopped while it sets up, ends without waiting for the baselines and stores nothing', async () => {
    const l = lab({ opening: never() });
    const training = l.run.train(NEW);
    await vi.waitFor(() => expect(l.bridges[0]?.seeds).toHaveLength(1));
    l.run.stop();
    await training;
    expect(l.states()).toEqual(['starting', 'stopping', 'idle']);
    expect(l.of('notice').map((e) => e.message)).toEqual([STOPPED_EARLY]);
    // The phase counted the episode the worker reported.
    expect(l.of('phase').map((e) => e.phase)).toContain(
      'setting up: measuring random actions, episode 1 of 20 (each up to spec.maxSteps steps)',
    );
    expect(l.trainer.published).toEqual([]);
    expect(l.store.settled).toEqual([]); // the trainer never created its run
    expect(l.bridges.every((b) => b.terminated)).toBe(true);
    expect(l.trainer.status).toBe('ready');
  });

  it('replaces a pool worker that crashes, as a code run does, and trains to its iterations', async () => {
    const l = lab();
    l.run.subscribe((e) => {
      if (e.type === 'step' && e.report.version === 1) l.crash[1]?.('boom'); // the pool's first worker
    });
    await l.run.train({ ...NEW, config: { ...CONFIG, iterations: 6 } });
    expect(l.states()).toEqual(['starting', 'running', 'idle']);
    expect(l.of('error')).toEqual([]);
    expect(l.of('notice').map((e) => e.message)).toEqual([
      expect.stringMatching(/^rollout-\d crashed: boom; replacing it/),
    ]);
    expect(l.of('report').map((e) => e.report.iterations)).toEqual([6]);
    expect(l.store.settled[0]?.end).toMatchObject({ trained: true, failure: null });
  });

  it('fails when the measuring worker crashes, and stores the training as failed with what it trained', async () => {
    const l = lab();
    l.run.subscribe((e) => {
      if (e.type === 'step' && e.report.version === 1) l.crash[0]?.('boom');
    });
    await l.run.train({ ...NEW, config: { ...CONFIG, iterations: 50 } });
    const message = 'the measuring rollout worker crashed: boom; training stopped';
    expect(l.states()).toEqual(['starting', 'running', 'failed']);
    expect(l.of('error').map((e) => e.message)).toEqual([message]);
    expect(l.of('report')).toEqual([]);
    expect(l.store.settled[0]?.end).toMatchObject({ trained: true, failure: message });
    expect(l.store.settled[0]?.end.result).toBeUndefined();
    expect(l.trainer.status).toBe('ready');
    expect(l.bridges.every((b) => b.terminated)).toBe(true);
  });

  it('Stop now gives up a wait that never ends, and says what it gave up', async () => {
    const l = lab({ measuring: never() });
    const training = l.run.train(NEW);
    await vi.waitFor(() => expect(l.of('phase').at(-1)?.phase).toMatch(/^measuring the trained policy/));
    l.run.stop();
    l.run.stop(); // Stop now
    await training;
    expect(l.states()).toEqual(['starting', 'running', 'stopping', 'idle']);
    expect(l.of('notice').map((e) => e.message)).toEqual([
      'Stopped at once while measuring the trained policy (version 3, greedy), episode 0 of 10 (each up to 20 steps): that was given up. The training is stored up to version 3.',
    ]);
    expect(l.of('error')).toEqual([]);
    expect(l.store.settled[0]?.end).toMatchObject({ trained: true, failure: null });
    // The trainer answered: it was not what hung.
    expect([l.trainer.restarts, l.trainer.status]).toEqual([0, 'ready']);
  });

  it('Stop now restarts a trainer that does not answer', async () => {
    const l = lab({ measuring: never() });
    l.trainer.answers = false;
    const training = l.run.train(NEW);
    await vi.waitFor(() => expect(l.of('phase').at(-1)?.phase).toMatch(/^measuring the trained policy/));
    l.run.stop();
    l.run.stop();
    await training;
    expect(l.of('notice')[0]?.message).toMatch(
      /^Stopped at once while measuring .+: that was given up, and the trainer worker, which did not answer, starts again\. The training is stored up to version 3\.$/,
    );
    expect(l.trainer.restarts).toBe(1);
  });

  it('hands the lease back with a trainer that answers: one gone without a word by the end starts again', async () => {
    const l = lab();
    const training = l.run.train(NEW);
    // The trainer dies silently once the training no longer needs it (after its last update).
    l.run.subscribe((e) => {
      if (e.type === 'step' && e.report.version === 3) l.trainer.answers = false;
    });
    await training;
    expect(l.of('notice').map((e) => e.message)).toEqual([
      'The trainer worker did not answer as the training ended: it starts again.',
    ]);
    expect(l.trainer.restarts).toBe(1);
  });

  it('a Stop now asked while the training already ends still restarts a trainer that does not answer', async () => {
    const l = lab();
    l.run.subscribe((e) => {
      if (e.type === 'step' && e.report.version === 3) {
        l.trainer.answers = false;
        l.run.stop();
      }
    });
    const training = l.run.train(NEW);
    await vi.waitFor(() => expect(l.states().at(-1)).toBe('stopping'));
    l.run.stop(); // Stop now, as the end waits on the trainer
    await training;
    expect(l.of('notice')[0]?.message).toMatch(
      /^Stopped at once while .+: that was given up, and the trainer worker, which did not answer, starts again\. The training is stored up to version 3\.$/,
    );
    expect(l.trainer.restarts).toBe(1);
  });

  it('refuses to start without a ready trainer, under another tab’s lock, or with settings out of range', async () => {
    const l = lab();
    l.trainer.lease.acquire('panel'); // the trainer panel trains
    await l.run.train(NEW);
    expect(l.of('error').map((e) => e.message)).toEqual(['the trainer is training; wait until it is ready']);
    expect(l.states()).toEqual([]);

    l.trainer.lease.release('panel');
    expect(l.trainer.status).toBe('ready');
    l.store.elsewhere.add('custom-t');
    await l.run.train(NEW);
    expect(l.of('error').at(-1)?.message).toBe(
      'another tab of this page is training it now: it cannot be resumed here',
    );
    expect(l.states()).toEqual(['starting', 'failed']);
    expect(l.trainer.status).toBe('ready');

    l.store.elsewhere.clear();
    await l.run.train({ ...NEW, config: { ...CONFIG, iterations: 0 } });
    expect(l.of('error').at(-1)?.message).toBe('iterations must be a whole number from 1 to 500, got 0');
    expect(l.bridges).toEqual([]); // no worker was started
    expect(l.store.held.size).toBe(0);
  });

  it('resumes a stored training from its newest version with its stored baselines', async () => {
    const l = lab();
    const baselines = { randomReturn: 7, untrainedReturn: 8, trainedReturn: 50 };
    const stored: ResumeStart = {
      kind: 'resume',
      config: { ...CONFIG, iterations: 5 },
      code: 'env',
      runId: 'custom-old',
      status: 'finished',
      seconds: 30,
      from: 3,
      nextJobId: 12,
      counters: { trainSteps: 3 },
      baselines,
    };
    l.store.stored = stored;
    // The table's copy may be older than the store's: the stored one is what resumes.
    await l.run.train({ ...stored, from: 1 });
    expect(l.of('start-version').map((e) => e.version)).toEqual([3]);
    expect(l.of('step').map((e) => e.report.version)).toEqual([4, 5]);
    expect(l.trainer.published).toEqual([4, 5]);
    // Its environments play other seeds than its first part's.
    expect(l.bridges[0]?.seeds).toEqual([CONFIG.seed + 6]);
    expect(lanesOf(l.bridges.slice(1))).toEqual([
      ['rollout-0', CONFIG.seed + 6, 5],
      ['rollout-1', CONFIG.seed + 7, 5],
    ]);
    expect(l.of('report')[0]?.report).toMatchObject({ iterations: 5, randomReturn: 7, untrainedReturn: 8 });
    expect(l.store.baselines).toEqual([['custom-old', { randomReturn: 7, untrainedReturn: 8 }]]);
    expect(l.store.settled[0]).toMatchObject({
      runId: 'custom-old',
      resumed: stored,
      end: { trained: true },
    });
    const progress = l.store.settled[0]?.end.progress;
    expect(progress?.seconds).toBeGreaterThanOrEqual(30);
    expect(progress?.counters?.trainSteps).toBe(5);
  });

  it('refuses to resume a stored policy of another shape than the environment', async () => {
    const l = lab();
    l.store.stored = {
      kind: 'resume',
      config: { ...CONFIG, iterations: 5 },
      code: 'env',
      runId: 'custom-old',
      status: 'failed',
      seconds: 0,
      from: 3,
      nextJobId: 0,
      counters: {},
    };
    l.trainer.resumedAt = { version: 3, args: { inputs: 4, hidden: 4, actions: 2 } };
    await l.run.train(l.store.stored);
    expect(l.of('error').map((e) => e.message)).toEqual([
      'the stored policy has 4 inputs and 2 actions, the environment 1 and 2: it cannot be resumed on it',
    ]);
    expect(l.states().at(-1)).toBe('failed');
    // Its end leaves the stored training as it was (the catalog restores its status).
    expect(l.store.settled[0]).toMatchObject({ runId: 'custom-old', end: { trained: false } });
  });
});
