import { describe, expect, it } from 'vitest';
import type { RolloutStats } from '../../../workers/rollout.worker';
import type { TimelineEvent } from '../pipeline/events';
import { emptyEngineStats } from '../rollout/rollout-engine';
import { defaultRunConfig, withOverrides } from '../config/run-config';
import { LAG_STEPS, dashboardOf, lastPolicyBytes, type Dashboard, type DashboardSource } from './dashboard';
import { instantRollout, instantTrainer } from './fakes';
import { assemblePipeline } from './pipeline';

const stats = (sandbox: string, hits: number, misses: number): RolloutStats => ({
  ...emptyEngineStats(),
  cache: { hits, misses, hitRate: 0, size: 0, capacity: 0 },
  sandbox,
  at: 0,
});

/** A pipeline that trained two steps, as the dashboard reads it. */
async function trained(events: TimelineEvent[] = []): Promise<DashboardSource> {
  const settings = withOverrides(defaultRunConfig(2), { pipeline: { workers: 1, eta: 0 } });
  let stepped: () => void = () => undefined;
  const two = new Promise<void>((r) => (stepped = r));
  let steps = 0;
  const { pipeline, source, lanes } = assemblePipeline(
    { runId: 'run-d', settings },
    {
      trainer: instantTrainer(),
      rollouts: [instantRollout()],
      hooks: { onStep: () => ++steps === 2 && stepped() },
    },
  );
  pipeline.start(0);
  await two;
  pipeline.stop();
  return { pipeline, source, lanes, faults: [], seconds: 12, settings, log: { events } };
}

describe('dashboardOf', () => {
  it("reads the run's rates, counters and setup from the pipeline, at the moment given", async () => {
    const s = await trained();
    const d = dashboardOf(s, {
      now: s.pipeline.startedAt + 2_000,
      workers: [{ stats: stats('quickjs', 3, 1) }, { stats: stats('quickjs', 1, 3) }],
      cores: 8,
      storage: { usage: 1, quota: 2 },
      previous: null,
    });
    expect(d.version).toBe(s.pipeline.version);
    expect(d.samplesPerSec).toBeCloseTo(s.pipeline.counters.trainedEpisodes / 2);
    expect(d.cacheHitRate).toBe(0.5);
    expect(d.sandboxes).toEqual(['quickjs']);
    expect(d.seconds).toBe(12);
    expect(d.setup).toEqual({ eta: 0, workers: 1, cores: 8, batchGroups: s.settings.learner.tasksPerBatch });
    // The stopped run's slots: the one worker's, all idle, each finished group a completed job
    // (the jobs Stop withdrew count in no outcome).
    expect(d.slots.map((x) => x.state)).toEqual(['idle', 'idle']);
    const groups = s.pipeline.counters.generatedEpisodes / s.settings.learner.groupSize;
    expect(d.slots.reduce((n, x) => n + x.completed, 0)).toBe(groups);
    expect(groups).toBeLessThanOrEqual(s.pipeline.counters.startedGroups);
    // A copy: the pipeline counting on does not change the figures drawn.
    s.pipeline.counters.trainSteps += 1;
    expect(d.counters.trainSteps).toBe(s.pipeline.counters.trainSteps - 1);
  });

  it("keeps a stopped run's last worker figures once its workers are gone", async () => {
    const s = await trained();
    const previous: Pick<Dashboard, 'cacheHitRate' | 'sandboxes'> = {
      cacheHitRate: 0.75,
      sandboxes: ['webcontainer'],
    };
    const d = dashboardOf(s, {
      now: s.pipeline.startedAt + 1,
      workers: [],
      cores: 2,
      storage: null,
      previous: {
        ...dashboardOf(s, { now: 1, workers: [], cores: 2, storage: null, previous: null }),
        ...previous,
      },
    });
    expect(d.cacheHitRate).toBe(0.75);
    expect(d.sandboxes).toEqual(['webcontainer']);
  });

  it('shows the lag of the steps given, in versions and samples, and the decontaminated count', async () => {
    const s = await trained();
    s.source.hindsight.decontaminated = 3;
    const steps = [
      { version: 1, episodes: 16, staleness: [0] },
      { version: 2, episodes: 16, staleness: [1] },
    ];
    const d = dashboardOf(s, { now: 1, workers: [], cores: 2, storage: null, previous: null, steps });
    expect(d.lag).toEqual({ meanVersions: 0.5, meanSamples: 8 });
    expect(d.hindsight.decontaminated).toBe(3);
    expect(dashboardOf(s, { now: 1, workers: [], cores: 2, storage: null, previous: null }).lag).toEqual({
      meanVersions: null,
      meanSamples: null,
    });
  });

  it('reads the lag from the newest steps only, which thinning keeps whole', async () => {
    const s = await trained();
    const old = Array.from({ length: 500 }, (_, i) => ({ version: i + 1, episodes: 16, staleness: [4] }));
    const recent = Array.from({ length: LAG_STEPS }, (_, i) => ({
      version: 501 + i,
      episodes: 16,
      staleness: [1],
    }));
    const d = dashboardOf(s, {
      now: 1,
      workers: [],
      cores: 2,
      storage: null,
      previous: null,
      steps: [...old, ...recent],
    });
    expect(d.lag.meanVersions).toBe(1);
    expect(d.lag.meanSamples).toBeCloseTo(16, 1); // the oldest step kept looks back past the window
  });

  it("takes the policy's size from the newest publish", () => {
    const publish = (bytes: number | undefined): TimelineEvent => ({
      lane: 'trainer',
      kind: 'publish',
      t0: 0,
      t1: 0,
      version: 1,
      ...(bytes === undefined ? {} : { meta: { policyBytes: bytes } }),
    });
    expect(lastPolicyBytes([])).toBeNull();
    expect(lastPolicyBytes([publish(10), publish(20), publish(undefined)])).toBe(20);
  });
});
