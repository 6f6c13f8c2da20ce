import type { WorkerBridge } from '../bridge/worker-bridge';

/**
 * A worker (through its bridge) started and prepared on first use. Its bridge rejects the calls
 * in flight when it crashes (`WorkerCrashed`), so that whatever waits on it (a chain of
 * evaluations) fails instead of waiting for ever; the next use after a crash starts a new worker.
 */
export class CrashSafeWorker<B extends Pick<WorkerBridge<unknown>, 'terminate'>> {
  private current: { bridge: B; ready: Promise<B> } | null = null;

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
    const bridge = await (this.current ?? this.start()).ready;
    return work(bridge);
  }

  /** Terminates the worker (the next use starts a new one). */
  dispose(): void {
    this.current?.bridge.terminate();
    this.current = null;
  }

  private start(): { bridge: B; ready: Promise<B> } {
    // A crashed bridge answers every later call with its crash: the work that used it fails too.
    const forget = () => {
      if (this.current?.bridge === bridge) this.current = null;
    };
    const bridge = this.create((message) => {
      forget();
      this.onCrash(message);
    });
    const ready = this.init(bridge).then(
      () => bridge,
      (err: unknown) => {
        forget();
        bridge.terminate();
        throw err;
      },
    );
    this.current = { bridge, ready };
    return this.current;
  }
}
