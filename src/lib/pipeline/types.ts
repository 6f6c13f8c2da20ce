import type { EnvConfig } from '../env/config';
import type { CurriculumSnapshot } from '../env/curriculum';
import type { TurnRecord } from '../env/episode';
import type { Level, Task } from '../env/suite';
import type { StepMetrics } from '../policy/metrics';
import type { TokenBatch } from '../rl/batch';
import type { Relabelled } from '../rl/hindsight';
import type { StrategyReport } from '../rl/strategy';
import type { EpisodePrefix, Trajectory } from '../rl/trajectory';
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
  /** The task's expected return when the job was scheduled (when the source gives one). */
  expectedReward?: number;
  /** What the job had played before it was preempted: its episodes go on from there. */
  resume?: KeptPrefix;
}

/** Resources a job uses: sandbox ms and policy tokens (per episode, or in all). */
export interface JobCost {
  sandboxMs: number;
  tokens: number;
}

/** A preempted job's played prefix: each episode's tokens and its sampling stream's state. */
export interface KeptPrefix {
  episodes: EpisodePrefix[];
  /** `Rng.state` of each episode's stream. */
  streams: number[];
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
  /**
   * `aborted`: stopped, or preempted by a worker that cannot keep what it played; `preempted`:
   * set aside with its played prefix in `kept`. Either way nothing was stored.
   */
  status: 'done' | 'aborted' | 'preempted';
  /** A preempted group's played prefix, to resume from. */
  kept?: KeptPrefix;
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
  /** What the group's episodes used, in all: sandbox ms and policy tokens (absent: not measured). */
  cost?: JobCost;
  /** Each episode's sandbox ms, as `Episode.sandboxMs` (absent: not measured). */
  episodeSandboxMs?: number[];
  /** Epoch ms the worker started and finished the group. */
  startedAt: number;
  endedAt: number;
}

/** The rollout side of the pipeline: one live rollout worker. */
export interface RolloutPort<T extends EpisodeOutcome = Trajectory> {
  play(job: RolloutJob): Promise<PlayedGroup<T>>;
  /**
   * Drops a job (stop, preemption): its `play` resolves with status `aborted`, or with `keep`
   * (a preemption) `preempted` and what it had played, where the worker can keep it.
   */
  abort(jobId: number, keep?: boolean): Promise<void>;
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

/** One training step as the page charts it. */
export interface StepReport {
  /** Version published by this step. */
  version: number;
  /** Episodes trained on. */
  episodes: number;
  meanReturn: number;
  success: number;
  /**
   * Per-task reward spread: the standard deviation of the returns within each group (the episodes
   * of one task), averaged over the groups of two or more. Absent in reports stored before it.
   */
  returnSpread?: number;
  /**
   * Episode length: the mean turns (programs written) and the mean tokens the policy wrote per
   * episode of the step. Absent for a custom environment's episodes and in reports stored before.
   */
  meanTurns?: number;
  meanTokens?: number;
  /** Trainer version minus the oldest token version, per trained group. */
  staleness: number[];
  loss: number;
  metrics: StepMetrics;
  /** Trainer idle before this step (waiting for data: the rollout phase when η = 0), ms. */
  waitMs: number;
  /** Training and publishing, ms. */
  trainMs: number;
  /** Epoch ms the step finished. */
  at: number;
  /**
   * What the update strategy did (absent for a custom environment's MLP and older records):
   * tensors trained, rate, performance statistics, `auto`'s switch, and every `importanceEvery`
   * versions the per-tensor importance.
   */
  strategy?: StrategyReport;
}

/** Greedy success of a published version, measured during a run. */
export interface EvalPoint {
  /** Version evaluated. */
  iteration: number;
  /** Seconds since the run (or its resumed session) started. */
  seconds: number;
  /** Episodes generated so far. */
  episodes: number;
  /** Level evaluated (the training level, or every level with the curriculum off). */
  level: Level | 'all';
  /** The run's own suite its training tasks came from (all of it evaluated), or null for the built-in tasks. */
  suite: string | null;
  successTrain: number;
  successHeldOut: number | null;
  /**
   * Greedy success on the generalisation suite's tasks of the level; null when none was scored,
   * absent in points stored before the suite existed.
   */
  successGeneralisation?: number | null;
  /** Mean episode reward of greedy play on the level's training tasks. */
  meanRewardTrain: number;
  /**
   * A tool-use run's held-out figures (DESIGN §3.1): greedy success when made to submit at the
   * first turn, the share of solved episodes that used `<run>` (null: none solved), mean turns;
   * the policy's own run share, revise and copy rates (`ToolUseFigures`; absent in older points).
   */
  toolUse?: {
    successOneTurn: number | null;
    solvedWithRun: number | null;
    meanTurns: number;
    runFraction?: number;
    reviseRate?: number | null;
    copyRate?: number | null;
  };
}

/** What a resumed run needs besides its weights and unconsumed trajectories. */
export interface RunProgress {
  /** Curriculum level index and the newest results of each task of that level. */
  curriculum?: CurriculumSnapshot;
  /** Per-task record of the scheduler's learning value: [attempts, successes], recency-weighted. */
  taskRecords?: Record<string, [number, number]>;
  /** The pipeline's counters over all the run's sessions (episodes generated and trained, drops, …). */
  counters?: Record<string, number>;
  /** Wall seconds the run has trained, over all its sessions. */
  seconds?: number;
  /** The next job id the pipeline gives: a resumed run's new jobs never reuse one. */
  nextJobId?: number;
  /** The next seq (trajectory key) the pipeline gives; a resumed run's new episodes go on from it. */
  nextSeq?: number;
}
