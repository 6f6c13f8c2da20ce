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
