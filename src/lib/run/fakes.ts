/** Fakes of the run layer's ports for its unit tests: rollouts that play at once, a trainer that publishes. */
import { VOCAB_SIZE } from '../env/vocab';
import { storedStepMetrics } from '../policy/metrics';
import type {
  PipelineTrainerPort,
  PlayedGroup,
  RolloutJob,
  RolloutPort,
  TrainOutcome,
} from '../pipeline/types';
import type { Trajectory } from '../rl/trajectory';
import type { RolloutStats } from '../../../workers/rollout.worker';
import type { RunRecord } from '../storage/db';
import { WorkerTimeout } from '../bridge/worker-errors';
import type { RolloutHost } from './rollout-pool';
import type { CodeTrainerApi, RunTrainer } from './session';
import { TrainerLease } from './trainer-lease';

/** One episode of `job`'s task, solved or not. */
export function fakeTrajectory(job: RolloutJob, solved: boolean): Trajectory {
  return {
    taskId: job.task.id,
    level: job.task.level,
    group: job.task.id,
    tokens: [1, 2, 3],
    owned: [0, 1, 1],
    rewards: [0, 0, solved ? 1 : 0],
    logProbs: [0, -1, -1],
    values: [0, 0.1, 0.2],
    versions: [-1, job.minVersion, job.minVersion],
    legal: new Uint8Array(3 * VOCAB_SIZE).fill(1),
    solved,
    turns: 1,
    return: solved ? 1 : 0,
    parts: { pass: solved ? 1 : 0, ranOk: 0, closeness: 0, turnCost: 0, noSubmit: 0, total: solved ? 1 : 0 },
  };
}

/**
 * A rollout worker that plays every job at once (after a turn of the event loop when `yields`:
 * timers then still run), half of its episodes solved.
 */
export function instantRollout(yields = false): RolloutPort & { played: number } {
  const port = {
    played: 0,
    play: async (job: RolloutJob): Promise<PlayedGroup> => {
      port.played += 1;
      if (yields) await new Promise((r) => setTimeout(r, 1));
      return {
        jobId: job.jobId,
        status: 'done',
        trajectories: Array.from({ length: job.samples }, (_, i) => fakeTrajectory(job, i % 2 === 0)),
        relabelled: [],
        seqs: Array.from({ length: job.samples }, (_, i) => job.seqBase + i),
        oldestVersion: job.minVersion,
        newestVersion: job.minVersion,
        interrupted: 0,
        startedAt: 0,
        endedAt: 0,
      };
    },
    abort: async () => undefined,
  };
  return port;
}

/** A trainer that publishes the next version at once, recording what it was given. */
export function instantTrainer(): PipelineTrainerPort & { calls: { fromVersion: number; seqs: number[] }[] } {
  const calls: { fromVersion: number; seqs: number[] }[] = [];
  return {
    calls,
    trainAndPublish: async (_batch, info): Promise<TrainOutcome> => {
      calls.push(info);
      return {
        version: info.fromVersion + 1,
        metrics: storedStepMetrics({ step: calls.length, loss: 0.5 }, 'decoupled'),
        startedAt: 0,
        publishedAt: 0,
      };
    },
  };
}

/**
 * A trainer worker in memory: it publishes at once, stores nothing, and can be made to crash;
 * `waitOn` holds a call until the promise it returns settles (a trainer that does not answer).
 * While `hangs()` says so, its heartbeat (`stats` through `withTimeout`) times out, as a bridge's
 * call to a worker that hangs does.
 */
export function memoryTrainer(
  waitOn: { resetPolicy?: () => Promise<void>; resumeNotice?: string } = {},
  hangs = () => false,
) {
  const train = instantTrainer();
  const calls: string[] = [];
  let version = 0;
  let crash: (m: string) => void = () => undefined;
  const api: CodeTrainerApi = {
    trainAndPublish: async (batch, info) => {
      calls.push(`train ${info.fromVersion}`);
      const out = await train.trainAndPublish(batch, info);
      version = out.version;
      return out;
    },
    resumeRun: async (init) => {
      calls.push(`resume ${init.runId}`);
      const notice = waitOn.resumeNotice;
      return {
        version,
        step: version,
        run: { id: init.runId } as RunRecord,
        metrics: { loss: 0.5 },
        ...(notice ? { notice } : {}),
      };
    },
    resetPolicy: async () => {
      calls.push('reset');
      await waitOn.resetPolicy?.();
      return { parameters: 0, trainable: 0 };
    },
    startRun: async () => ({ version: 0, publishedAt: 0 }),
    stopRun: async (runId, status) => {
      calls.push(`stop ${runId} ${status}`);
      return null;
    },
    stats: async () => ({}) as Awaited<ReturnType<CodeTrainerApi['stats']>>,
    debugFault: async () => crash('injected'),
  };
  const lease = new TrainerLease<CodeTrainerApi, string, string>({
    create: (onCrash) => {
      crash = onCrash;
      return {
        api,
        withTimeout: (ms) =>
          hangs()
            ? { ...api, stats: () => Promise.reject(new WorkerTimeout('stats', ms, 'the trainer worker')) }
            : api,
        boot: async () => {
          calls.push('boot');
          return 'info';
        },
      };
    },
  });
  const trainer: RunTrainer = { lease, onEvents: () => () => undefined };
  return { trainer, lease, calls, crash: (m: string) => crash(m) };
}

/** Rollout workers in memory, playing every job at once. */
export function memoryRollouts(): {
  create: (name: string, onCrash: (m: string) => void) => RolloutHost;
  made: number;
} {
  const out = {
    made: 0,
    create: (): RolloutHost => {
      out.made += 1;
      const port = instantRollout(true);
      return {
        prepare: async () => ({ backend: 'fake' }),
        join: async () => ({ version: 0 }),
        terminate: () => undefined,
        api: {
          stats: async () => ({}) as RolloutStats,
          play: port.play,
          abort: port.abort,
          debugFault: async () => undefined,
          startCustom: () => Promise.reject(new Error('a code run only')),
          playCustom: () => Promise.reject(new Error('a code run only')),
          abortCustom: async () => undefined,
        },
      };
    },
  };
  return out;
}
