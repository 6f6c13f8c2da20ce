/**
 * The records the page persists that other layers produce: timeline events, step reports and
 * evaluation points. They live here so that storage imports nothing above it.
 */
import type { Level } from '../env/suite';
import type { StepMetrics } from '../policy/metrics';
import type { StrategyReport } from '../rl/strategy';

/** Swim lane of the timeline an event belongs to (DESIGN §9). */
export type Lane = 'trainer' | 'store' | `rollout-${number}` | 'controller' | 'sandbox';

/** What happened in a span or at an instant (t0 === t1). */
export type EventKind =
  | 'init'
  | 'generate'
  | 'sandbox'
  | 'episode'
  | 'train-step'
  | 'publish'
  | 'adopt'
  | 'interrupt'
  | 'stale-drop'
  | 'preempt'
  | 'wait'
  | 'load'
  | 'error'
  /** The update strategy switched (`auto`), with its reason. */
  | 'strategy'
  /** Stored data deleted to make room (a full storage quota, or retention). */
  | 'evict'
  /** A crashed or hung worker was replaced, or the trainer restarted from the store. */
  | 'restart'
  /** Work lost to a fault, put back in the queue. */
  | 'requeue';

/** One timeline event. Times are epoch milliseconds, comparable across threads. */
export interface TimelineEvent {
  lane: Lane;
  kind: EventKind;
  t0: number;
  t1: number;
  /** Policy version the work ran with, or −1 when none applies. */
  version: number;
  meta?: Record<string, string | number | boolean>;
  /**
   * Sandbox calls inside the span, ms after t0 (whole ms, ascending): each `<run>` and `<submit>`
   * of an episode group's episodes. On the group's own event, so that a call adds no event.
   */
  calls?: number[];
}

/** One training step as the page charts it. */
export interface StepReport {
  /** Version published by this step. */
  version: number;
  /** Episodes trained on. */
  episodes: number;
  meanReturn: number;
  success: number;
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
   * versions the per-tensor importance (the page's heat map).
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
   * first turn, the share of solved episodes that used `<run>` (null: none solved), mean turns.
   */
  toolUse?: { successOneTurn: number | null; solvedWithRun: number | null; meanTurns: number };
}
