/** What the pipeline controller is given and reports: its settings, job source, counters and hooks. */
import type { EnvConfig } from '../env/config';
import type { Task } from '../env/suite';
import type { TokenBatch } from '../rl/batch';
import type { ReplayConfig } from '../rl/replay-config';
import type { Trajectory } from '../rl/trajectory';
import type { ScheduleKind } from '../config/run-config';
import type { JobClass } from './scheduler';
import type { Lane, TimelineEvent } from './events';
import type { HoldView } from './hold';
import type {
  EpisodeOutcome,
  JobCost,
  KeptPrefix,
  PlayedGroup,
  RolloutJob,
  RolloutPort,
  StepReport,
} from './types';

/** Settings of the asynchronous pipeline (DESIGN §2, §5, §6). */
export interface PipelineConfig {
  /** Max staleness η in versions: 0 is synchronous (rollout and training alternate), `Infinity` unbounded. */
  eta: number;
  /**
   * A fixed lag (`RunConfig.playLag`): the workers play weights this many versions back, so
   * samples up to η + playLag versions old are kept, not dropped as stale. Absent: 0.
   */
  playLag?: number;
  /** Groups per training batch (B); each group is `groupSize` episodes of one task. */
  batchGroups: number;
  /** Episodes per group. */
  groupSize: number;
  /** Groups one rollout worker plays at once (its slots; their episodes decode in one batch). */
  slotsPerWorker: number;
  /** A waiting job of a higher class preempts the lowest-value running job after this long, ms. */
  preemptAfterMs: number;
  /** The waiting queue's order (`RunConfig.pipeline.schedule`); absent: `learning-value`. */
  schedule?: ScheduleKind;
  /** New jobs drawn ahead to wait in the ordered queue while every slot is busy (absent: 0). */
  queueAhead?: number;
  /**
   * `expected-reward`: a new job that has waited `preemptAfterMs` preempts the running job of the
   * lowest expected return when its own exceeds that by this much (absent: never).
   */
  preemptMargin?: number;
  /**
   * Each slot's budget per episode: sandbox ms and policy tokens (0: no limit; absent: none). A
   * job starts on a worker only while the expected costs of its jobs fit its slots' budget.
   */
  budget?: JobCost;
  /** FIFO (each sample once) or prioritized replay. */
  replay: ReplayConfig;
  env: EnvConfig;
  /** Rollout workers relabel programs whose outputs are integers up to this magnitude (hindsight); 0: off. */
  relabelMaxAbs: number;
  /** One-token variants of each relabelled program, relabelled too (`HindsightConfig.mutations`). */
  relabelMutations: number;
  /** Seed of job seeds and of prioritized draws. */
  seed: number;
  /** A job whose `play` throws is retried this many times before the run stops with its error. */
  maxJobFailures: number;
}

/**
 * Where the pipeline's jobs come from and how its batches are made: `CodeJobSource` for the
 * code-writing env (token batches), `CustomJobSource` for a custom JS environment.
 */
export interface JobSource<B = TokenBatch, T extends EpisodeOutcome = Trajectory> {
  /**
   * The next training task, with its priority class, expected learning value and, where the
   * source keeps one, its expected return.
   */
  nextTask(): { task: Task; cls: JobClass; value: number; expectedReward?: number };
  /** A finished group (curriculum, per-task records). */
  record(group: PlayedGroup<T>): void;
  /** The message a rollout that kept failing stops the run with (default: its task and tries). */
  describeFailure?(task: Task, tries: number, message: string): string;
  /**
   * The training batch of `groups` (importance `weights` scale their advantages) and each
   * group's new replay priority.
   */
  batch(groups: readonly PlayedGroup<T>[], weights: readonly number[]): { batch: B; priorities: number[] };
}

/** Counters the page and the bench read. */
export interface PipelineCounters {
  /** Groups started, finished (accepted), trained (drawn into a batch), per their episodes. */
  startedGroups: number;
  generatedEpisodes: number;
  trainedEpisodes: number;
  trainSteps: number;
  staleDrops: number;
  staleDroppedEpisodes: number;
  preemptions: number;
  /** Preempted jobs started again from their kept prefix, and the policy tokens so kept. */
  resumed: number;
  keptTokens: number;
  requeues: number;
  /** Ms jobs waited in the queue before they started, summed over every start. */
  queueWaitMs: number;
  /** Jobs that waited because no worker's budget had room for them, and groups that went over it. */
  budgetWaits: number;
  overruns: number;
  /** Episodes that adopted a new version mid-way. */
  interrupts: number;
  /** Trained groups by staleness (trainer version − oldest token version). */
  stalenessHistogram: Record<number, number>;
  /** Wall ms the trainer spent training and publishing. */
  trainerBusyMs: number;
  trainerRestarts: number;
  /** Groups pushed out of a full replay buffer before being trained on (unbounded η only). */
  replayOverflow: number;
}

/** A run's counters over all its sessions: those stored before this session's, plus `counters`' numbers. */
export function runCounters(
  before: Readonly<Record<string, number>>,
  counters: PipelineCounters,
): Record<string, number> {
  const out: Record<string, number> = { ...before };
  for (const [k, v] of Object.entries(counters)) if (typeof v === 'number') out[k] = (out[k] ?? 0) + v;
  return out;
}

/** Callbacks of the pipeline: timeline events, progress, finished groups, and a failure that stops the run. */
export interface PipelineHooks<T extends EpisodeOutcome = Trajectory> {
  emit?(event: TimelineEvent): void;
  onStep?(report: StepReport): void;
  onError?(message: string): void;
  /** Where Pause / Step stand now, when that changed (`hold.ts`). */
  onHold?(view: HoldView): void;
  /** A group played to the end, as the controller takes it: its job, and the lane of the worker that played it. */
  onPlayed?(job: RolloutJob, group: PlayedGroup<T>, lane: Lane): void;
}

/** Counters of a pipeline that has done nothing yet. */
export function emptyCounters(): PipelineCounters {
  return {
    startedGroups: 0,
    generatedEpisodes: 0,
    trainedEpisodes: 0,
    trainSteps: 0,
    staleDrops: 0,
    staleDroppedEpisodes: 0,
    preemptions: 0,
    resumed: 0,
    keptTokens: 0,
    requeues: 0,
    queueWaitMs: 0,
    budgetWaits: 0,
    overruns: 0,
    interrupts: 0,
    stalenessHistogram: {},
    trainerBusyMs: 0,
    trainerRestarts: 0,
    replayOverflow: 0,
  };
}

/** A live rollout worker: its slots and the jobs it runs. */
export interface WorkerEntry<T extends EpisodeOutcome> {
  id: string;
  lane: Lane;
  port: RolloutPort<T>;
  slots: number;
  jobs: Set<number>;
}

/** A job running on a worker. */
export interface RunningJob {
  job: RolloutJob;
  workerId: string;
  startedAt: number;
  failures: number;
  /** Times the job was preempted before (a job is preempted at most once). */
  preemptions: number;
  /** Its expected cost per episode when it started (what it takes of its worker's budget). */
  cost: JobCost;
}

/** A job waiting for a slot: drawn ahead, requeued after a failure, or preempted. */
export interface QueuedJob {
  id: number;
  cls: JobClass;
  value: number;
  expectedReward?: number;
  enqueuedAt: number;
  task: Task;
  failures: number;
  /** The seqs its first launch took: a relaunch stores its group over what a dead worker may have stored. */
  seqBase?: number;
  /** Times it was preempted. */
  preemptions: number;
  /** What it had played when it was preempted: it resumes from there. */
  resume?: KeptPrefix;
}

/** Where a resumed run stands: its latest version, next keys, and unconsumed groups. */
export interface RestoredRun<T extends EpisodeOutcome> {
  version: number;
  nextSeq: number;
  nextJobId: number;
  groups: PlayedGroup<T>[];
  /** Stored seqs no group takes (superseded attempts): marked consumed with the next version. */
  superseded?: readonly number[];
}
