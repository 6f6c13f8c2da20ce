import type { EnvConfig } from '../env/config';
import type { TurnRecord } from '../env/episode';
import type { Task } from '../env/suite';
import type { StepMetrics } from '../policy/metrics';
import type { TokenBatch } from '../rl/batch';
import type { Relabelled } from '../rl/hindsight';
import type { StrategyReport } from '../rl/strategy';
import type { Trajectory } from '../rl/trajectory';
import type { JobClass } from './scheduler';

/** One unit of rollout work: a group of episodes of one task, played by one rollout worker. */
export interface RolloutJob {
  jobId: number;
  runId: string;
  task: Task;
  /** Episodes of the task (the group of GRPO and RLOO). */
  samples: number;
  /**
   * The worker starts the job only once it runs at least this version (the version current
   * when the job was admitted), loading it from the store if the announce is late.
   */
  minVersion: number;
  /** Keys of the group's trajectories in the store: seqBase, seqBase + 1, … */
  seqBase: number;
  /** Seed of the job's sampling stream. */
  seed: number;
  env: EnvConfig;
  /**
   * When > 0, the worker relabels each episode's programs with their own outputs (hindsight,
   * `rl/hindsight.ts`); outputs must be integers of at most this magnitude. 0: no relabelling.
   */
  relabelMaxAbs: number;
  /** One-token variants of each program relabelled beside it (`HindsightConfig.mutations`). */
  relabelMutations: number;
  cls: JobClass;
  value: number;
}

/** What the controller reads of an episode: its return, and whether it solved its task. */
export interface EpisodeOutcome {
  return: number;
  /** False where the environment has no notion of solving (a custom JS environment). */
  solved: boolean;
}

/**
 * What a rollout worker sends back for a job. `T` is the episode's training data: a token
 * trajectory of the code-writing environment, or a custom environment's steps.
 */
export interface PlayedGroup<T extends EpisodeOutcome = Trajectory> {
  jobId: number;
  /** `aborted`: preempted or stopped; nothing was stored. */
  status: 'done' | 'aborted';
  trajectories: T[];
  /** The group's programs relabelled with their own outputs (empty unless the job asked). */
  relabelled: Relabelled[];
  /** Store keys of the trajectories (written before the group was returned). */
  seqs: number[];
  /**
   * What the sandbox answered to each turn of each episode, indexed like `trajectories` (code
   * runs; not stored): the page's program feed shows it.
   */
  turns?: TurnRecord[][];
  /** Oldest and newest version stamped on any of the group's policy tokens. */
  oldestVersion: number;
  newestVersion: number;
  /** Episodes of the group that adopted a new version mid-way (interrupted rollouts). */
  interrupted: number;
  /** Epoch ms the worker started and finished the group. */
  startedAt: number;
  endedAt: number;
}

/** The rollout side of the pipeline: one live rollout worker. */
export interface RolloutPort<T extends EpisodeOutcome = Trajectory> {
  play(job: RolloutJob): Promise<PlayedGroup<T>>;
  /** Drops a job (preemption, stop): its `play` resolves with status `aborted`. */
  abort(jobId: number): Promise<void>;
}

/** What one training step on a batch came to. */
export interface TrainOutcome {
  /** The version published after the update. */
  version: number;
  metrics: StepMetrics;
  /** Epoch ms the trainer started computing and announced the new version. */
  startedAt: number;
  publishedAt: number;
  /** What the update strategy did (the transformer's trainer): tensors, rate, switch, importance. */
  strategy?: StrategyReport;
}

/** What the controller tells the trainer of a batch beside its tensors. */
export interface TrainInfo {
  /** The version the update makes from. */
  fromVersion: number;
  /** Samples the version marks consumed. */
  seqs: number[];
  /** The success share of the batch's played episodes: an update strategy's performance. */
  performance?: number;
}

/**
 * The trainer side: train on a batch, publish the next version durably, and mark `seqs` consumed
 * (the batch's samples and those of groups dropped untrained since the last version).
 */
export interface PipelineTrainerPort<B = TokenBatch> {
  trainAndPublish(batch: B, info: TrainInfo): Promise<TrainOutcome>;
}

export type { EvalPoint, StepReport } from '../storage/records';
