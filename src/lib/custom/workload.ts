import { DEFAULT_ENV_CONFIG } from '../env/config';
import type { Task } from '../env/suite';
import type { CustomTrainConfig } from './config';
import type { CustomBatch } from './trainer';
import { DEFAULT_REPLAY } from '../rl/replay-config';
import type { JobSource, PipelineConfig } from '../pipeline/controller';
import { now } from '../pipeline/events';
import type { EpisodeOutcome, PlayedGroup } from '../pipeline/types';

// The main thread's side of a custom environment in the pipeline (no tfjs here: it stays out of
// the page's first bundle); the rollout worker's side, which plays episodes, is `rollout.ts`.

/**
 * One episode of a custom JS environment as training data: per step the observation, the action,
 * its reward, and, as for a token trajectory, the behaviour log-prob and the version that chose it.
 */
export interface CustomTrajectory extends EpisodeOutcome {
  /** Observation before each step, [steps, I]. */
  obs: Float32Array;
  /** Action taken at each step, [steps]. */
  actions: Int32Array;
  /** Reward of each step, [steps]. */
  rewards: Float32Array;
  /** log π_behav of each action, [steps]. */
  logProbs: Float32Array;
  /** Version of the policy that chose each action, [steps]. */
  versions: Int32Array;
  /** When the episode adopted a newer version mid-way (an interrupted rollout), and which. */
  adoptions: { at: number; version: number }[];
}

/** A finished group of custom episodes as the pipeline takes it (nothing stored, nothing relabelled). */
export function customGroup(
  jobId: number,
  played: { trajectories: CustomTrajectory[]; interrupted: number },
  startedAt: number,
): PlayedGroup<CustomTrajectory> {
  let oldest = Infinity;
  let newest = -Infinity;
  for (const t of played.trajectories)
    for (const v of t.versions) {
      oldest = Math.min(oldest, v);
      newest = Math.max(newest, v);
    }
  return {
    jobId,
    status: 'done',
    trajectories: played.trajectories,
    relabelled: [],
    seqs: [],
    oldestVersion: Number.isFinite(oldest) ? oldest : -1,
    newestVersion: Number.isFinite(newest) ? newest : -1,
    interrupted: played.interrupted,
    startedAt,
    endedAt: now(),
  };
}

/**
 * The training batch of custom episodes: their steps in order, with discounted returns-to-go
 * and the behaviour log-probs the decoupled loss weighs them by.
 */
export function customBatch(
  trajectories: readonly CustomTrajectory[],
  inputs: number,
  gamma: number,
): CustomBatch {
  const N = trajectories.reduce((n, t) => n + t.actions.length, 0);
  const batch: CustomBatch = {
    steps: N,
    inputs,
    obs: new Float32Array(N * inputs),
    actions: new Int32Array(N),
    returns: new Float32Array(N),
    behavLogp: new Float32Array(N),
    episodeReturns: trajectories.map((t) => t.return),
  };
  let k = 0;
  for (const t of trajectories) {
    if (t.obs.length !== t.actions.length * inputs)
      throw new Error(
        `an episode has ${t.obs.length} observation values for ${t.actions.length} steps of ${inputs}`,
      );
    batch.obs.set(t.obs, k * inputs);
    batch.actions.set(t.actions, k);
    batch.behavLogp.set(t.logProbs, k);
    let acc = 0;
    for (let i = t.rewards.length - 1; i >= 0; i--) {
      acc = (t.rewards[i] ?? 0) + gamma * acc;
      batch.returns[k + i] = acc;
    }
    k += t.actions.length;
  }
  return batch;
}

/**
 * The pipeline's settings for a custom environment: one slot per worker (a worker's environment
 * holds one episode at a time), FIFO replay, no preemption or relabelling, and a rollout error
 * (the environment's code failing) ends training with its message.
 */
export function customPipelineConfig(c: CustomTrainConfig): PipelineConfig {
  return {
    eta: c.eta,
    batchGroups: c.groupsPerBatch,
    groupSize: c.episodesPerGroup,
    slotsPerWorker: 1,
    preemptAfterMs: Infinity,
    replay: DEFAULT_REPLAY,
    env: DEFAULT_ENV_CONFIG,
    relabelMaxAbs: 0,
    relabelMutations: 0,
    seed: c.seed,
    maxJobFailures: 0,
  };
}

/** The one "task" of a custom environment: play it. Jobs name it on the timeline. */
export const CUSTOM_TASK: Task = { id: 'custom-env', level: 'easy', examples: [], hidden: [] };

/**
 * A custom JS environment as the pipeline's work: every job is a group of episodes of the
 * environment, every batch their steps. The pipeline runs it FIFO (each group trained once), so
 * replay importance weights do not apply.
 */
export class CustomJobSource implements JobSource<CustomBatch, CustomTrajectory> {
  constructor(
    /** Observation length of the environment. */
    private readonly inputs: number,
    /** Discount of the returns-to-go. */
    private readonly gamma: number,
  ) {}

  nextTask(): ReturnType<JobSource['nextTask']> {
    return { task: CUSTOM_TASK, cls: 'normal', value: 0 };
  }

  record(): void {
    // No curriculum or per-task record: one environment.
  }

  /** A rollout fails when the environment's code does: its own message says what and where. */
  describeFailure(_task: Task, _tries: number, message: string): string {
    return `training stopped: ${message}`;
  }

  batch(groups: readonly PlayedGroup<CustomTrajectory>[]): { batch: CustomBatch; priorities: number[] } {
    return {
      batch: customBatch(
        groups.flatMap((g) => g.trajectories),
        this.inputs,
        this.gamma,
      ),
      priorities: groups.map(() => 1),
    };
  }
}
