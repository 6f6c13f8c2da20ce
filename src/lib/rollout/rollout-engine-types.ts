/** What a rollout engine is given and reports: its options, its jobs' entries and its counters. */
import type { Episode } from '../env/episode';
import type { Rng } from '../random';
import type { ModelArgs } from '../policy/config';
import type { Weights } from '../policy/model';
import type { Trajectory } from '../rl/trajectory';
import type { Lane, TimelineEvent } from '../pipeline/events';
import type { JobCost, PlayedGroup, RolloutJob } from '../pipeline/types';

/** How a rollout worker plays its jobs. */
export interface EngineOptions {
  args: ModelArgs;
  /** Episodes decoded together at most (slots × group size): the sampler's rows. */
  rows: number;
  /**
   * Adopt a new version after this many decode steps even if no episode is at a turn boundary
   * (0: only at turn boundaries, or at once when idle).
   */
  interruptEveryTokens: number;
  /** Sampling temperature; the recorded behaviour log-probs are those of the tempered distribution. */
  temperature: number;
  /** Seed of the sampling stream. */
  seed: number;
  lane: Lane;
  /**
   * Ask the store for a version that has not arrived after this long, ms (the announce may be
   * late or lost), and again every `fetchAfterMs` after each fetch while the job still waits.
   */
  fetchAfterMs: number;
  emit?(event: TimelineEvent): void;
  /** Stores a finished group's trajectories; the group is returned only after this resolves. */
  persist(job: RolloutJob, trajectories: Trajectory[]): Promise<void>;
  /** Fetches the newest stored version ≥ `min` (when the announce did not arrive in time). */
  fetch(min: number): Promise<void>;
  /** Weights the engine no longer uses (the caller decides what to dispose). */
  release(weights: Weights): void;
}

/** A job the engine plays: its episodes decode in the shared batch. */
export interface ActiveJob {
  job: RolloutJob;
  episodes: Episode[];
  /** Each episode's sampling stream (`episodeStreams`). */
  streams: Rng[];
  startedAt: number;
  startVersion: number;
  /** Episodes that adopted a new version mid-way. */
  interrupted: Set<Episode>;
  /** A resumed job: the policy tokens each episode kept from before its preemption. */
  kept?: number[];
  /** When each sandbox call of its episodes started (a `<run>` or `<submit>`), epoch ms. */
  calls: number[];
  /** Sandbox ms and policy tokens its episodes used in this play. */
  cost: JobCost;
  aborted: boolean;
  resolve(group: PlayedGroup): void;
  reject(err: Error): void;
}

/** A job waiting for its minimum version: it holds no rows until it starts. */
export interface WaitingJob {
  jobId: number;
  min: number;
  /** Set by `abort` (or `dispose`): the job resolves as aborted instead of starting. */
  aborted: boolean;
  /** Set by a preempting `abort`: the job resolves `preempted`, keeping what it was given to resume. */
  keep?: boolean;
  wake(): void;
}

/** Counters a worker reports with its heartbeat. */
export interface EngineStats {
  version: number;
  activeEpisodes: number;
  activeJobs: number;
  tokens: number;
  adoptions: number;
  interrupts: number;
  prefills: number;
}

/** The counters of an engine that has played nothing (or of a worker with no engine). */
export function emptyEngineStats(): EngineStats {
  return {
    version: -1,
    activeEpisodes: 0,
    activeJobs: 0,
    tokens: 0,
    adoptions: 0,
    interrupts: 0,
    prefills: 0,
  };
}
