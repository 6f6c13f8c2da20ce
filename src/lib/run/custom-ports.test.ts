import { describe, expect, it } from 'vitest';
import type { CustomRunJoin, RolloutStats } from '../../../workers/rollout.worker';
import { fakeTrajectory } from '../custom/fixture';
import { DEFAULT_ENV_CONFIG } from '../env/config';
import { CUSTOM_TASK, customGroup } from '../custom/workload';
import { emptyCounters } from '../pipeline/controller-types';
import type { TimelineEvent } from '../pipeline/events';
import type { RolloutJob } from '../pipeline/types';
import { DEFAULT_CUSTOM_TRAIN } from '../custom/config';
import type { CustomBatch } from '../custom/trainer';
import { storedStepMetrics } from '../policy/metrics';
import {
  countersOf,
  customEnvSeed,
  customPoolWorkload,
  customRunInit,
  customTrainerPort,
  quotaNotice,
  type CustomTrainerApi,
} from './custom-ports';
import type { RolloutHost } from './rollout-pool';

/** A job of the custom environment, as the pipeline makes it. */
const job = (jobId: number): RolloutJob => ({
  jobId,
  runId: 'custom-a',
  task: CUSTOM_TASK,
  samples: 2,
  minVersion: 1,
  seqBase: 0,
  seed: 1,
  env: DEFAULT_ENV_CONFIG,
  relabelMaxAbs: 0,
  relabelMutations: 0,
  cls: 'normal',
  value: 0,
});

/** A pool worker that records how it joined and plays two episodes, the first adopting version 2 mid-way. */
function host(): RolloutHost & { joins: CustomRunJoin[]; aborted: number[] } {
  const joins: CustomRunJoin[] = [];
  const aborted: number[] = [];
  const refuse = () => Promise.reject(new Error('a code run only'));
  return {
    joins,
    aborted,
    prepare: async () => ({ backend: 'fake' }),
    join: refuse,
    terminate: () => undefined,
    api: {
      stats: async () => ({}) as RolloutStats,
      play: refuse,
      abort: async () => undefined,
      debugFault: async () => undefined,
      startCustom: async (init) => {
        joins.push(init);
        return { version: 0, spec: { observations: 1, actions: 2, maxSteps: 5 } };
      },
      playCustom: async (job) => {
        const first = { ...fakeTrajectory([1, 1], [-0.7, -0.7]), adoptions: [{ at: 5, version: 2 }] };
        return customGroup(
          job.jobId,
          { trajectories: [first, fakeTrajectory([0], [-0.7])], interrupted: 1 },
          0,
        );
      },
      abortCustom: async (jobId) => void aborted.push(jobId),
    },
  };
}

describe('a custom training’s ports', () => {
  it('joins a pool worker to the training on its lane’s seed, and plays its jobs on that lane', async () => {
    const config = { ...DEFAULT_CUSTOM_TRAIN, seed: 7 };
    const events: TimelineEvent[] = [];
    const workload = customPoolWorkload('custom-a', { config, code: 'env', seed: 70 }, (e) => events.push(e));
    const h = host();
    await workload.join(h, 'rollout-2');
    expect(h.joins).toEqual([
      { runId: 'custom-a', lane: 'rollout-2', code: 'env', seed: 72, fetchAfterMs: 250 },
    ]);
    expect([workload.name, workload.seed]).toEqual(['rollout-custom', 7]);
    const port = workload.port(h, 'rollout-2');
    const group = await port.play(job(3));
    expect(group.trajectories).toHaveLength(2);
    // The group on its lane (mean return of its episodes), and the mid-episode adoption as an interrupt.
    expect(events.map((e) => [e.lane, e.kind, e.meta?.meanReturn ?? e.version])).toEqual([
      ['rollout-2', 'episode', 1],
      ['rollout-2', 'interrupt', 2],
    ]);
    await port.abort(3);
    expect(h.aborted).toEqual([3]);
  });

  it('trains on the trainer with the progress as the step starts, its buffers transferred', async () => {
    const calls: { fromVersion: number; seconds: number | undefined }[] = [];
    const refuse = () => Promise.reject(new Error('not called here'));
    const api: CustomTrainerApi = {
      initCustom: refuse,
      resumeCustom: refuse,
      publishCustom: refuse,
      stats: refuse,
      trainAndPublishCustom: async (_batch, info) => {
        calls.push({ fromVersion: info.fromVersion, seconds: info.progress.seconds });
        return {
          version: info.fromVersion + 1,
          metrics: storedStepMetrics({ loss: 0.5 }, 'decoupled'),
          startedAt: 0,
          publishedAt: 0,
        };
      },
    };
    let seconds = 0;
    const port = customTrainerPort(api, () => ({ seconds: ++seconds }));
    const batch: CustomBatch = {
      steps: 2,
      inputs: 1,
      obs: new Float32Array(2),
      actions: new Int32Array(2),
      returns: new Float32Array(2),
      behavLogp: new Float32Array(2),
      episodeReturns: [1],
    };
    const out = await port.trainAndPublish(batch, { fromVersion: 4, seqs: [] });
    expect(out.version).toBe(5);
    expect(calls).toEqual([{ fromVersion: 4, seconds: 1 }]);
  });

  it('names the stored training, sizes its MLP, and seeds a resume apart from its first part', () => {
    const config = { ...DEFAULT_CUSTOM_TRAIN, seed: 5, workers: 2, eta: 1, hidden: 16 };
    const { init, mlp } = customRunInit(
      'custom-b',
      { config, code: 'env' },
      { observations: 4, actions: 2, maxSteps: 9 },
    );
    expect(init).toMatchObject({
      runId: 'custom-b',
      name: 'custom environment, η 1, 2 workers',
      config: { code: 'env' },
    });
    expect(mlp).toEqual({ inputs: 4, hidden: 16, actions: 2 });
    expect(customEnvSeed({ kind: 'new', config })).toBe(5);
    expect(customEnvSeed({ kind: 'resume', config, from: 3 })).toBe(5 + 3 * 2);
  });

  it('says what a quota eviction took, and nothing of other marks', () => {
    const evict: TimelineEvent = {
      lane: 'store',
      kind: 'evict',
      t0: 0,
      t1: 0,
      version: 3,
      meta: { reason: 'quota', versions: 2, trajectories: 0, events: 0 },
    };
    expect(quotaNotice(evict, 'the new version')).toMatch(/2 .*versions?/);
    expect(quotaNotice({ ...evict, kind: 'publish' }, 'the new version')).toBeNull();
    const counters = emptyCounters();
    counters.stalenessHistogram[0] = 1;
    const copy = countersOf(counters);
    copy.stalenessHistogram[0] = 9;
    expect(counters.stalenessHistogram[0]).toBe(1);
  });
});
