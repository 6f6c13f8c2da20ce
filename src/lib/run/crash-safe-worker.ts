import { failureSignal } from './failure-signal';

/**
 * A worker (through its bridge) started on first use, whose crash rejects the calls in flight: a
 * dead worker never answers them, and whatever waits on it (a chain of evaluations) would wait
 * for ever. The next use after a crash starts a new worker.
 */
export class CrashSafeWorker<B extends { terminate(): void }> {
  private current: { bridge: B; gone: Promise<never> } | null = null;

  constructor(
    /** Makes the bridge; it calls `onCrash` when its worker throws an uncaught error or fails to load. */
    private readonly create: (onCrash: (message: string) => void) => B,
    /** Prepares a new worker before its first use. */
    private readonly init: (bridge: B) => Promise<unknown>,
    /** Told of each crash (after the calls in flight were rejected). */
    private readonly onCrash: (message: string) => void,
  ) {}

  /** Runs `work` on the worker, started first if there is none; a crash meanwhile rejects. */
  async use<T>(work: (bridge: B) => Promise<T>): Promise<T> {
    const { bridge, gone } = this.current ?? (await this.start());
    return Promise.race([work(bridge), gone]);
  }

  /** Terminates the worker (the next use starts a new one). */
  dispose(): void {
    this.current?.bridge.terminate();
    this.current = null;
  }

  private async start(): Promise<{ bridge: B; gone: Promise<never> }> {
    const gone = failureSignal();
    const bridge = this.create((message) => {
      gone.reject(new Error(`the worker crashed: ${message}`));
      if (this.current?.bridge === bridge) this.current = null;
      bridge.terminate();
      this.onCrash(message);
    });
    try {
      await Promise.race([this.init(bridge), gone.promise]);
    } catch (err) {
      bridge.terminate();
      throw err;
    }
    this.current = { bridge, gone: gone.promise };
    return this.current;
  }
}
