import { errorMessage } from '../errors';
import { WorkerCrashed } from '../bridge/worker-errors';

/** The trainer worker as the lease drives it: boot it (again), and call it. */
export interface TrainerHost<Api, Info, Backend> {
  /** Starts (or restarts) the worker on `backends` and initialises it; resolves with what it says of itself. */
  boot(backends: Backend[] | undefined): Promise<Info>;
  /** The worker's API (valid across restarts). */
  readonly api: Api;
  /** The API with one limit for every call made through it (a call past it rejects with `WorkerTimeout`). */
  withTimeout(ms: number): Api;
}

/** Where the worker is in its life. */
export type TrainerPhase = 'idle' | 'starting' | 'ready' | 'error';

/** Who uses the trainer now: a code run, a custom environment's training, the trainer panel's loop or its Save/Load. */
export type TrainerHolder = 'run' | 'custom' | 'panel' | 'store';

export interface LeaseState {
  phase: TrainerPhase;
  /** Who holds the trainer (null: free); only a ready trainer is handed out. */
  holder: TrainerHolder | null;
  /** Why the worker is in error, or null. */
  error: string | null;
}

/** The trainer's state as the page names it. */
export type TrainerStatus = 'idle' | 'starting' | 'ready' | 'training' | 'busy' | 'error';

/** The page's label of a lease state: its phase, or who holds a ready trainer. */
export function statusOf(s: LeaseState): TrainerStatus {
  if (s.phase !== 'ready') return s.phase;
  return s.holder === null ? 'ready' : s.holder === 'panel' ? 'training' : 'busy';
}

/** What the lease reports to its subscribers. */
export type LeaseEvent =
  | { kind: 'state'; state: LeaseState }
  /** The worker crashed (told before the crash is handled: a call waiting on it never comes back). */
  | { kind: 'crashed'; message: string }
  /** The worker crashed and, with no holder handling crashes, was started again with fresh weights. */
  | { kind: 'restarted'; message: string };

export interface TrainerLeaseOptions<Api, Info, Backend> {
  /** Makes the host; it calls `onCrash` when its worker throws an uncaught error or fails to load. */
  create(onCrash: (message: string) => void): TrainerHost<Api, Info, Backend>;
  /** Milliseconds now (performance.now() in the page; a fake clock in tests). */
  now?: () => number;
}

/** The trainer as a holder sees the lease (what a run needs of it; a fake in tests). */
export interface LeasedTrainer<Api> {
  readonly api: Api;
  readonly state: LeaseState;
  withTimeout(ms: number): Api;
  restart(): Promise<unknown>;
  acquire(holder: TrainerHolder): boolean;
  release(holder: TrainerHolder): void;
  takeCrashes(handler: (message: string) => void): () => void;
  countRestart(version: number): { allowed: boolean; count: number };
}

/** Crashes within a minute, beyond which a crashed trainer is no longer started again. */
const MAX_CRASHES_PER_MINUTE = 3;
/** Restarts a crash taker may make at one version (none published in between) before it gives up. */
export const MAX_RESTARTS_PER_VERSION = 3;

/**
 * The one owner of the trainer worker: it starts and restarts it, hands it to one holder at a
 * time (a code run, a custom training, the trainer panel), and applies the crash policy. A holder
 * that restarts the trainer itself (a run resumes it from the store) takes the crashes over
 * (`takeCrashes`); otherwise a worker that had started is started again, and one that crashed
 * while starting, or keeps crashing, is left in error so that a start that always fails does not loop.
 */
export class TrainerLease<Api, Info, Backend = string> implements LeasedTrainer<Api> {
  private current: LeaseState = { phase: 'idle', holder: null, error: null };
  private readonly host: TrainerHost<Api, Info, Backend>;
  private readonly now: () => number;
  private listeners: ((e: LeaseEvent) => void)[] = [];
  private crashHandlers: ((message: string) => void)[] = [];
  private crashTimes: number[] = [];
  /** Restarts the crash taker made at one version (`countRestart`). */
  private restartsAt = { version: -1, count: 0 };
  private backends: Backend[] | undefined;
  /** Counts starts: a start overtaken by a later one does not set the phase. */
  private starts = 0;

  constructor(opts: TrainerLeaseOptions<Api, Info, Backend>) {
    this.now = opts.now ?? (() => performance.now());
    this.host = opts.create((message) => this.crashed(message));
  }

  get state(): LeaseState {
    return this.current;
  }

  /** The worker's API, for its holder. */
  get api(): Api {
    return this.host.api;
  }

  /** The worker's API with one limit for every call made through it, for a caller that knows its own bound. */
  withTimeout(ms: number): Api {
    return this.host.withTimeout(ms);
  }

  /** Calls `listener` with every change; returns the unsubscribe function. */
  subscribe(listener: (e: LeaseEvent) => void): () => void {
    this.listeners = [...this.listeners, listener];
    return () => (this.listeners = this.listeners.filter((l) => l !== listener));
  }

  /**
   * Starts the worker on `backends` (best first; all when undefined): the phase is `starting`,
   * then `ready` (free: a start lets go of any holder) or `error`. Resolves with the worker's
   * info, or null when it failed (the state says why).
   */
  async start(backends?: Backend[]): Promise<Info | null> {
    this.backends = backends;
    const start = ++this.starts;
    this.set({ phase: 'starting', holder: null, error: null });
    try {
      const info = await this.host.boot(backends);
      if (start === this.starts) this.set({ phase: 'ready', holder: null, error: null });
      return info;
    } catch (err) {
      // A crash while starting rejects the boot's call in flight: the trainer stays in error.
      const why =
        err instanceof WorkerCrashed ? `trainer worker crashed: ${err.workerMessage}` : errorMessage(err);
      if (start === this.starts) this.fail(why);
      return null;
    }
  }

  /** Starts the worker again on the backends of the last start (after a crash, a hang). */
  restart(): Promise<Info | null> {
    return this.start(this.backends);
  }

  /** Puts the trainer in error (`message` says why); any holder is let go. */
  fail(message: string): void {
    this.set({ phase: 'error', holder: null, error: message });
  }

  /** Hands the ready, free trainer to `holder`; false when it is not ready or someone holds it. */
  acquire(holder: TrainerHolder): boolean {
    if (this.current.phase !== 'ready' || this.current.holder !== null) return false;
    this.set({ ...this.current, holder });
    return true;
  }

  /** Lets go of the trainer if `holder` holds it (a stale release does nothing). */
  release(holder: TrainerHolder): void {
    if (this.current.holder === holder) this.set({ ...this.current, holder: null });
  }

  /**
   * Takes over crash handling until the returned function is called (the newest taker hears
   * the crashes; none: the lease's own policy applies).
   */
  takeCrashes(handler: (message: string) => void): () => void {
    this.crashHandlers = [...this.crashHandlers, handler];
    this.restartsAt = { version: -1, count: 0 }; // a new taker's restarts count from none
    return () => (this.crashHandlers = this.crashHandlers.filter((h) => h !== handler));
  }

  /**
   * The crash policy of a taker that restarts the trainer itself (a run resumes it from its newest
   * stored version): counts a restart at `version`, the newest version the taker has. Allowed up
   * to `MAX_RESTARTS_PER_VERSION` times there; a trainer that keeps dying without publishing a
   * newer version is not restarted for the taker again (`count` says how many times it died).
   */
  countRestart(version: number): { allowed: boolean; count: number } {
    const count = this.restartsAt.version === version ? this.restartsAt.count + 1 : 1;
    this.restartsAt = { version, count };
    return { allowed: count <= MAX_RESTARTS_PER_VERSION, count };
  }

  private crashed(message: string): void {
    this.emit({ kind: 'crashed', message });
    if (this.crashHandlers.length > 0) {
      for (const h of this.crashHandlers) h(message);
      return;
    }
    const phase = this.current.phase;
    // Starting: the bridge rejects the boot's call in flight, and the start puts the trainer in error.
    if (phase === 'starting') return;
    const t = this.now();
    this.crashTimes = [...this.crashTimes.filter((c) => t - c < 60_000), t];
    if (phase !== 'ready' || this.crashTimes.length > MAX_CRASHES_PER_MINUTE) {
      this.fail(`trainer worker crashed: ${message}`);
      return;
    }
    void this.restart().then(() => {
      if (this.current.phase === 'ready') this.emit({ kind: 'restarted', message });
    });
  }

  private set(state: LeaseState): void {
    this.current = state;
    this.emit({ kind: 'state', state });
  }

  private emit(e: LeaseEvent): void {
    for (const l of this.listeners) l(e);
  }
}
