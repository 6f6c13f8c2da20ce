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
   * True when the start-up was given up from outside (a crash, a Stop it did not answer in time)
   * rather than by a failure of its own: what it waited on may never answer.
   */
  get interrupted(): boolean {
    return this.fromOutside;
  }

  /** Gives the start-up up: `run` rejects with `why` (the first reason wins). */
  abandon(why: Error): void {
    this.giveUp(why, true);
  }

  private giveUp(why: Error, fromOutside: boolean): void {
    if (this.abandonedBy) return;
    this.abandonedBy = why;
    this.fromOutside = fromOutside;
    clearTimeout(this.stopTimer);
    this.signal.reject(why);
  }

  /**
   * A Stop during the start-up: the start-up may still end by itself within `ms` (it is then
   * stopped as a whole); after that it is given up (a hung trainer, a blocked storage open).
   */
  stopWithin(ms: number): void {
    if (this.abandonedBy || this.stopTimer !== undefined) return;
    this.stopTimer = setTimeout(
      () =>
        this.abandon(
          new Error(`the run's start-up did not end within ${ms / 1000} s of the Stop: it was given up`),
        ),
      ms,
    );
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
