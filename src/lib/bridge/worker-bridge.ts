import * as Comlink from 'comlink';
import { WorkerCrashed, WorkerTerminated, WorkerTimeout } from './worker-errors';

/** Lifecycle of a worker as its bridge sees it. */
export type WorkerState = 'stopped' | 'running' | 'crashed';

/** What a bridge needs of a worker: comlink's endpoint, its error events, terminate (a `Worker`; a fake in tests). */
export type WorkerLike = Comlink.Endpoint & Pick<Worker, 'terminate'>;

/** The names of an API's members. */
export type MethodOf<Api> = Extract<keyof Api, string>;

/** How long one call may go unanswered, ms; null: as long as it takes. */
export type CallLimit = number | null;

/** How a bridge names its worker and bounds its calls. */
export interface BridgeOptions<Api> {
  /** The worker as error messages name it ("the trainer worker"). */
  name?: string;
  /** Limit of one call (`DEFAULT_CALL_MS` when omitted); past it the call rejects with `WorkerTimeout`. */
  timeoutMs?: CallLimit;
  /** Methods with limits of their own: long computations get a longer one, or none. */
  methodTimeouts?: Partial<Record<MethodOf<Api>, CallLimit>>;
}

/** Default limit of one call, ms: a worker silent for a minute hangs (the pipeline's heartbeat bound). */
export const DEFAULT_CALL_MS = 60_000;

/**
 * Owns one worker and its comlink proxy: start, terminate, restart, crash detection, and the
 * calls in flight. A call never waits on a worker that cannot answer: a crash rejects every call
 * in flight with `WorkerCrashed` (and each later one, until the bridge is terminated or started
 * again), `terminate()` and `restart()` reject them with `WorkerTerminated`, and a call past its
 * limit rejects with `WorkerTimeout`. Each worker kind has one bridge built on this class.
 */
export class WorkerBridge<Api> {
  private worker: WorkerLike | undefined;
  private remote: Comlink.Remote<Api> | undefined;
  /** Rejects of the calls sent to the current worker and not answered yet. */
  private readonly pending = new Set<(err: Error) => void>();
  /** What the crashed worker said (null unless `state` is 'crashed'). */
  private crash: string | null = null;
  private readonly name: string;
  private readonly timeoutMs: CallLimit;
  private readonly methodTimeouts: Partial<Record<string, CallLimit>>;
  private readonly proxy: Comlink.Remote<Api>;
  state: WorkerState = 'stopped';

  constructor(
    private readonly create: () => WorkerLike,
    /**
     * Called when the worker throws an uncaught error or fails to load; the calls it had in flight
     * reject with `WorkerCrashed` right after (a restart made here does not change that).
     */
    private readonly onCrash: (message: string) => void = () => undefined,
    options: BridgeOptions<Api> = {},
  ) {
    this.name = options.name ?? 'the worker';
    this.timeoutMs = options.timeoutMs === undefined ? DEFAULT_CALL_MS : options.timeoutMs;
    this.methodTimeouts = options.methodTimeouts ?? {};
    this.proxy = this.view((method) =>
      Object.hasOwn(this.methodTimeouts, method) ? (this.methodTimeouts[method] ?? null) : this.timeoutMs,
    );
  }

  /** The worker's API; starts the worker on first use (and after `terminate()`). */
  get api(): Comlink.Remote<Api> {
    if (this.state === 'stopped') this.start();
    return this.proxy;
  }

  /** The API with one limit for every call made through it, for a call site that knows its own bound. */
  withTimeout(limit: CallLimit): Comlink.Remote<Api> {
    if (this.state === 'stopped') this.start();
    return this.view(() => limit);
  }

  /** Calls in flight (sent, not answered, not rejected). */
  get inFlight(): number {
    return this.pending.size;
  }

  start(): void {
    if (this.worker) return;
    const worker = this.create();
    worker.addEventListener('error', (e) => this.crashed(worker, errorText(e)));
    worker.addEventListener('messageerror', () =>
      this.crashed(worker, 'worker sent a message that could not be read'),
    );
    this.worker = worker;
    this.remote = Comlink.wrap<Api>(worker);
    this.crash = null;
    this.state = 'running';
  }

  /** Ends the worker; its calls in flight reject with `WorkerTerminated`. The next use starts a new one. */
  terminate(): void {
    this.stop(new WorkerTerminated(this.name));
  }

  /** A new worker in place of the current one, whose calls in flight reject with `WorkerTerminated`. */
  restart(): void {
    this.stop(new WorkerTerminated(this.name, true));
    this.start();
  }

  private stop(reason: WorkerTerminated): void {
    const { worker, remote } = this;
    this.worker = undefined;
    this.remote = undefined;
    this.crash = null;
    this.state = 'stopped';
    this.rejectAll(reason);
    remote?.[Comlink.releaseProxy]();
    worker?.terminate();
  }

  private crashed(worker: WorkerLike, message: string): void {
    if (worker !== this.worker) return; // a late event of a worker already ended
    this.worker = undefined;
    this.remote = undefined;
    this.crash = message;
    this.state = 'crashed';
    worker.terminate(); // a worker that threw is not trusted with another call
    // The owner hears first (a wait of its own that it rejects comes before these), and a restart
    // it makes meanwhile does not make these calls terminated ones: they were the crashed worker's.
    const inFlight = this.takePending();
    this.onCrash(message);
    const err = new WorkerCrashed(message, this.name);
    for (const reject of inFlight) reject(err);
  }

  private rejectAll(err: Error): void {
    for (const reject of this.takePending()) reject(err);
  }

  private takePending(): ((err: Error) => void)[] {
    const rejects = [...this.pending];
    this.pending.clear();
    return rejects;
  }

  /**
   * A stand-in for the comlink remote whose method calls go through `call`. Comlink's symbols
   * (`releaseProxy`, `createEndpoint`) reach the current remote; `then` is absent, so that
   * `await bridge.api` gives the API, as with comlink's own remote.
   */
  private view(limitOf: (method: string) => CallLimit): Comlink.Remote<Api> {
    const handler: ProxyHandler<object> = {
      get: (_target, prop) => {
        if (typeof prop === 'symbol') return this.remote ? Reflect.get(this.remote, prop) : undefined;
        if (prop === 'then') return undefined;
        return (...args: unknown[]) => this.call(prop, args, limitOf(prop));
      },
    };
    return new Proxy({}, handler) as Comlink.Remote<Api>;
  }

  /** Sends one call to the worker (started if there is none); settles however the worker ends. */
  private call(method: string, args: unknown[], limit: CallLimit): Promise<unknown> {
    if (this.crash !== null) return Promise.reject(new WorkerCrashed(this.crash, this.name));
    if (!this.remote) this.start();
    const remote = this.remote;
    let answer: Promise<unknown> | undefined = undefined;
    answer = new Promise((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const settle = (): void => {
        clearTimeout(timer);
        this.pending.delete(fail);
      };
      const fail = (err: Error): void => {
        settle();
        reject(err);
        // A call no one waits on (`void bridge.api.abort(id)`) that the worker's end cuts short is
        // no error of the page; whoever awaits the call still gets this rejection.
        answer?.catch(() => undefined);
      };
      this.pending.add(fail);
      if (limit !== null) timer = setTimeout(() => fail(new WorkerTimeout(method, limit, this.name)), limit);
      try {
        const send = Reflect.get(remote ?? {}, method) as (...a: unknown[]) => Promise<unknown>;
        send(...args).then(
          (value) => {
            settle();
            resolve(value);
          },
          (err: unknown) => {
            settle();
            reject(err);
          },
        );
      } catch (err) {
        settle();
        reject(err);
      }
    });
    return answer;
  }
}

/** The message of a worker's `error` event (a failed load has none). */
function errorText(e: Event): string {
  const message = 'message' in e ? e.message : undefined;
  return typeof message === 'string' && message ? message : 'worker failed to load or threw';
}
