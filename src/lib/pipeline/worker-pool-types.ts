/** What the worker pool is given: its workers, its settings of fault detection, its hooks. */
import type { Lane, TimelineEvent } from './events';

/** One live worker as the pool sees it. */
export interface PoolWorker<R = unknown> {
  /** Answers as soon as the worker's thread is free (the heartbeat), with what it reports. */
  ping(): Promise<R>;
  /**
   * The worker's progress counter in shared memory (`beacon.ts`), which moves while it works even
   * when its thread is too busy to answer a heartbeat; absent where memory is not shared.
   */
  beacon?(): number;
  terminate(): void;
}

/** Settings of fault detection. */
export interface PoolConfig {
  /** The progress counters are read, and the hang rule applied, this often, ms. */
  heartbeatMs: number;
  /** A heartbeat message goes to a worker at most this often, ms (it costs both threads a turn). */
  pingMs: number;
  /**
   * No sign of life for this long means the worker hangs, ms: neither an answer to a heartbeat
   * nor, where the worker has one, a move of its progress counter. The bound grows on a machine
   * so loaded that healthy workers fall silent for long (`adaptFactor`).
   */
  hangMs: number;
  /**
   * The hang bound is at least this many times the longest silence a worker of the pool ended
   * (by a sign of life) within the last `adaptWindowMs`: a healthy worker's pauses raise it.
   */
  adaptFactor: number;
  adaptWindowMs: number;
  /**
   * The most the hang bound grows to, ms; also the bound of a worker without a progress counter
   * (memory not shared: a heartbeat alone, which waits for both event loops, decides) and how long
   * a worker silent while most of the others are too (the machine, not the worker) is given.
   */
  maxHangMs: number;
  /**
   * A heartbeat unanswered for this long means the worker hangs even though its counter moves
   * (its event loop never turns: it would never take a new job or version), ms.
   */
  blockedMs: number;
  /**
   * Workers kept started and initialised but idle, to take over at once from one that fails
   * (starting a worker from nothing costs its backend and sandbox start-up).
   */
  spares: number;
  /**
   * A worker that has not started (prepared) or joined the run within this long is given up, ms:
   * a worker that dies or hangs there never answers, and its lane would stay empty for good.
   */
  startMs: number;
}

/**
 * A hang is detected within about hangMs + 2 × heartbeatMs (≤ 850 ms) while
 * the page's timers run, and within maxHangMs of wall time whatever happens. With heartbeats alone,
 * healthy workers on a loaded 2-core machine were declared hung at 600 ms (a review saw 4 replaced
 * in 25 s), mostly in stalls of the whole machine. With the counter and the lateness rule, the
 * longest counted silence of a healthy worker was 169–368 ms here, with up to 8 workers, an
 * evaluation and two busy loops on the 2 cores (README).
 */
export const DEFAULT_POOL: PoolConfig = {
  heartbeatMs: 50,
  pingMs: 150,
  hangMs: 750,
  adaptFactor: 1.5,
  adaptWindowMs: 30_000,
  maxHangMs: 3_000,
  blockedMs: 10_000,
  spares: 1,
  startMs: 60_000,
};

/** A fault the pool handled, for the page and the tests. */
export interface FaultRecord {
  lane: Lane;
  reason: 'crashed' | 'hung';
  message: string;
  /** Epoch ms: the last sign of life, detection, and the replacement ready (null while pending). */
  lastSeen: number;
  detectedAt: number;
  replacedAt: number | null;
}

/** How the pool makes and uses workers. */
export interface PoolHooks<W extends PoolWorker> {
  /**
   * Starts and initialises a worker, not yet part of the run; `onCrash` is called if it throws an
   * uncaught error or fails to load. `giveUp` aborts when the pool gives this start up (a crash,
   * `startMs` without an answer): terminate what was started, which may never answer.
   */
  prepare(onCrash: (message: string) => void, giveUp: AbortSignal): Promise<W>;
  /** Makes a prepared worker play for `lane` (joins the run, adopts the newest version). */
  join(worker: W, lane: Lane): Promise<void>;
  /** The worker is ready: give it work. */
  joined(lane: Lane, worker: W): void;
  /** The worker is gone (before its replacement is spawned): take its work back. */
  lost(lane: Lane, reason: string): void;
  emit?(event: TimelineEvent): void;
  /** A replacement could not be started. */
  onError?(message: string): void;
}
