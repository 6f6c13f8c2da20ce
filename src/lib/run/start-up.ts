import { failureSignal } from './failure-signal';

/** Thrown by `StartUp.check` once the start-up was given up: what it would build next is not built. */
export class StartUpAbandoned extends Error {
  constructor() {
    super('the start-up was given up');
    this.name = 'StartUpAbandoned';
  }
}

/**
 * A run's start-up: a chain of awaits (the storage, the trainer, the workers) that a crash, or a
 * Stop it does not answer in time, gives up. Giving up ends the wait at once, and the chain, which
 * goes on in the background, stops at its next `check()`: nothing it would build after that point
 * is built, so nothing is left running with no Stop to end it.
 */
export class StartUp {
  private abandonedBy: Error | null = null;
  private fromOutside = false;
  /** What the step in progress waits on (`step`). */
  private pending: string | null = null;
  private pendingAtGiveUp: string | null = null;
  private readonly signal = failureSignal();
  private stopTimer: ReturnType<typeof setTimeout> | undefined;

  /** Why the start-up was given up, or null. */
  get abandoned(): Error | null {
    return this.abandonedBy;
  }

  /** Throws once the start-up was given up. Call after every await, before building what follows. */
  check(): void {
    if (this.abandonedBy) throw new StartUpAbandoned();
  }

  /**
   * Awaits `p`, one step of the start-up waiting on `what` (named in the message of a Stop that
   * gives it up), then `check()`s.
   */
  async step<T>(what: string, p: Promise<T>): Promise<T> {
    this.pending = what;
    try {
      return await p;
    } finally {
      if (this.pending === what) this.pending = null;
      this.check();
    }
  }

  /** What the start-up was waiting on when it was given up from outside (null: nothing named). */
  get gaveUpWaitingOn(): string | null {
    return this.fromOutside ? this.pendingAtGiveUp : null;
  }

  /** Gives the start-up up: `run` rejects with `why` (the first reason wins). */
  abandon(why: Error): void {
    this.giveUp(why, true);
  }

  private giveUp(why: Error, fromOutside: boolean): void {
    if (this.abandonedBy) return;
    this.abandonedBy = why;
    this.fromOutside = fromOutside;
    this.pendingAtGiveUp = this.pending;
    clearTimeout(this.stopTimer);
    this.signal.reject(why);
  }

  /**
   * A Stop during the start-up: the start-up may still end by itself within `ms` (it is then
   * stopped as a whole); after that it is given up (a hung trainer, a blocked storage open).
   */
  stopWithin(ms: number): void {
    if (this.abandonedBy || this.stopTimer !== undefined) return;
    this.stopTimer = setTimeout(() => {
      const on = this.pending ? ` (it was waiting for ${this.pending})` : '';
      this.abandon(
        new Error(`the run's start-up did not end within ${ms / 1000} s of the Stop${on}: it was given up`),
      );
    }, ms);
  }

  /**
   * Runs `steps` until it ends or the start-up is given up. A failure of the steps gives the
   * start-up up too, so a later check in a branch still in flight stops there.
   */
  async run(steps: (s: StartUp) => Promise<void>): Promise<void> {
    const chain = steps(this);
    chain.catch(() => undefined); // once given up, its own end (StartUpAbandoned) is not looked at
    try {
      await Promise.race([chain, this.signal.promise]);
    } catch (err) {
      this.giveUp(err instanceof Error ? err : new Error(String(err)), false);
      throw this.abandonedBy ?? err;
    } finally {
      clearTimeout(this.stopTimer);
    }
  }
}
