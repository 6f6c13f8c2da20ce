import * as Comlink from 'comlink';

/** Lifecycle of a worker as its bridge sees it. */
export type WorkerState = 'stopped' | 'running' | 'crashed';

/**
 * Owns one worker and its comlink proxy: start, terminate, restart, and crash detection. Each
 * worker kind has one bridge (DESIGN §2) built on this class.
 */
export class WorkerBridge<Api> {
  private worker: Worker | undefined;
  private remote: Comlink.Remote<Api> | undefined;
  state: WorkerState = 'stopped';

  constructor(
    private readonly create: () => Worker,
    /** Called when the worker throws an uncaught error or fails to load. */
    private readonly onCrash: (message: string) => void = () => undefined,
  ) {}

  /** The worker's API; starts the worker on first use. */
  get api(): Comlink.Remote<Api> {
    if (!this.remote) this.start();
    return this.remote as Comlink.Remote<Api>;
  }

  start(): void {
    if (this.worker) return;
    const worker = this.create();
    worker.addEventListener('error', (e) => this.crashed(e.message || 'worker failed to load or threw'));
    worker.addEventListener('messageerror', () =>
      this.crashed('worker sent a message that could not be read'),
    );
    this.worker = worker;
    this.remote = Comlink.wrap<Api>(worker);
    this.state = 'running';
  }

  terminate(): void {
    this.remote?.[Comlink.releaseProxy]();
    this.worker?.terminate();
    this.worker = undefined;
    this.remote = undefined;
    if (this.state !== 'crashed') this.state = 'stopped';
  }

  restart(): void {
    this.terminate();
    this.start();
  }

  private crashed(message: string): void {
    this.state = 'crashed';
    this.onCrash(message);
  }
}
