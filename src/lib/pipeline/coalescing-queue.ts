/**
 * Jobs one at a time, in order, with at most one request waiting: a request made while another
 * waits to start replaces it, so requests that come faster than jobs finish do not pile up (the
 * newest is the one that matters). The run panel's periodic evaluations go through one: on a
 * large suite each took longer than the run took to train the next versions, and a queue of
 * them never reached the newest. One-off jobs (`run`) queue behind them and are not replaced.
 */
export class CoalescingQueue<A> {
  private chain: Promise<void> = Promise.resolve();
  /** The request at the end of the queue that has not started: the next one replaces its args. */
  private open: { args: A } | null = null;

  /** `job` does the work of a request; what it throws is passed to `onError`, and the queue goes on. */
  constructor(
    private readonly job: (args: A) => Promise<void>,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  /** Asks for a job with `args`; the request waiting at the end of the queue, if any, takes them instead. */
  ask(args: A): void {
    if (this.open) {
      this.open.args = args;
      return;
    }
    const slot = { args };
    this.open = slot;
    this.chain = this.chain.then(async () => {
      if (this.open === slot) this.open = null;
      try {
        await this.job(slot.args);
      } catch (err) {
        this.onError(err);
      }
    });
  }

  /** Runs `work` after every job asked for so far; its result or error is the caller's. */
  run<T>(work: () => Promise<T>): Promise<T> {
    this.open = null; // a request after this job waits behind it
    const result = this.chain.then(work);
    this.chain = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  /** Resolves when every job asked for so far is done. */
  idle(): Promise<void> {
    return this.chain;
  }
}
