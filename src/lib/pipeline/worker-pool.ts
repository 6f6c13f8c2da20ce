import { now, type Lane, type TimelineEvent } from './events';

/** One live worker as the pool sees it. */
export interface PoolWorker<R = unknown> {
  /** Answers as soon as the worker's thread is free (the heartbeat), with what it reports. */
  ping(): Promise<R>;
  terminate(): void;
}

/** Settings of fault detection. */
export interface PoolConfig {
  /** A heartbeat is sent this often, ms. */
  heartbeatMs: number;
  /** A heartbeat unanswered for this long means the worker hangs, ms. */
  hangMs: number;
  /**
   * Workers kept started and initialised but idle, to take over at once from one that fails
   * (starting a worker from nothing costs its backend and sandbox start-up).
   */
  spares: number;
}

/**
 * A healthy worker on a loaded 2-core machine left heartbeats unanswered for 606–843 ms (a
 * review saw 4 healthy workers replaced in 25 s with 600 ms): 3 s leaves room for that.
 */
export const DEFAULT_POOL: PoolConfig = { heartbeatMs: 150, hangMs: 3_000, spares: 1 };

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
   * uncaught error or fails to load.
   */
  prepare(onCrash: (message: string) => void): Promise<W>;
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

/** A prepared worker and where its crash reports go (set when it takes a lane). */
interface Prepared<W> {
  worker: W;
  route: { crash: ((message: string) => void) | null };
}

interface Member<W, R> {
  lane: Lane;
  worker: W | null;
  /** Incarnation: a late signal from a replaced worker is ignored. */
  generation: number;
  lastSeen: number;
  pingSentAt: number | null;
  /** The last heartbeat's answer. */
  lastReply: R | null;
}

/**
 * Keeps N rollout workers alive: spawns them, sends heartbeats, and replaces a worker that
 * crashed (an uncaught error) or hangs (a heartbeat unanswered past `hangMs`), after telling the
 * pipeline so it can requeue that worker's work.
 */
export class WorkerPool<W extends PoolWorker<R>, R = unknown> {
  readonly faults: FaultRecord[] = [];
  private readonly members: Member<W, R>[];
  private timer: ReturnType<typeof setInterval> | undefined;
  private closed = false;
  private spares: Promise<Prepared<W> | null>[] = [];

  constructor(
    lanes: readonly Lane[],
    private readonly hooks: PoolHooks<W>,
    private readonly config: PoolConfig = DEFAULT_POOL,
  ) {
    this.members = lanes.map((lane) => ({
      lane,
      worker: null,
      generation: 0,
      lastSeen: now(),
      pingSentAt: null,
      lastReply: null,
    }));
  }

  /** Spawns every worker (in parallel), then the spares, and starts the heartbeat. */
  async start(): Promise<void> {
    await Promise.all(this.members.map((m) => this.spawn(m)));
    this.timer = setInterval(() => this.beat(), this.config.heartbeatMs);
    this.refill();
  }

  /** The live workers, by lane, with their last heartbeat's answer. */
  workers(): { lane: Lane; worker: W; last: R | null }[] {
    return this.members.flatMap((m) =>
      m.worker ? [{ lane: m.lane, worker: m.worker, last: m.lastReply }] : [],
    );
  }

  /** Terminates every worker. */
  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    for (const s of this.spares) void s.then((p) => p?.worker.terminate());
    this.spares = [];
    for (const m of this.members) {
      m.worker?.terminate();
      m.worker = null;
      m.generation += 1;
    }
  }

  private prepare(): Promise<Prepared<W>> {
    const route: Prepared<W>['route'] = { crash: null };
    return this.hooks.prepare((message) => route.crash?.(message)).then((worker) => ({ worker, route }));
  }

  /** Starts spares up to the configured number (failures are retried at the next refill). */
  private refill(): void {
    while (!this.closed && this.spares.length < this.config.spares) {
      this.spares.push(this.prepare().catch(() => null));
    }
  }

  /** Gives `m` a worker: a spare when one is ready, else a new one; joins it to the run. */
  private async spawn(m: Member<W, R>): Promise<void> {
    const generation = ++m.generation;
    const spare = this.spares.shift();
    let prepared = spare ? await spare : null;
    if (!prepared) prepared = await this.prepare();
    const { worker, route } = prepared;
    route.crash = (message) => {
      if (m.generation === generation) this.fail(m, 'crashed', message);
    };
    try {
      await this.hooks.join(worker, m.lane);
    } catch (err) {
      worker.terminate();
      if (!spare) throw err;
      // The spare was broken: start one from nothing.
      m.generation -= 1;
      return this.spawn(m);
    }
    if (this.closed || m.generation !== generation) {
      worker.terminate();
      return;
    }
    m.worker = worker;
    m.lastSeen = now();
    m.pingSentAt = null;
    m.lastReply = null;
    this.hooks.joined(m.lane, worker);
    if (this.timer) this.refill();
  }

  /** Sends heartbeats; a worker that has not answered one for `hangMs` is declared hung. */
  private beat(): void {
    const t = now();
    for (const m of this.members) {
      const w = m.worker;
      if (!w) continue;
      if (m.pingSentAt !== null) {
        if (t - m.pingSentAt > this.config.hangMs)
          this.fail(m, 'hung', `no heartbeat for ${Math.round(t - m.pingSentAt)} ms`);
        continue;
      }
      const generation = m.generation;
      m.pingSentAt = t;
      w.ping().then(
        (reply) => {
          if (m.generation !== generation) return;
          m.lastSeen = now();
          m.pingSentAt = null;
          m.lastReply = reply;
        },
        (err: unknown) => {
          if (m.generation === generation)
            this.fail(m, 'crashed', err instanceof Error ? err.message : String(err));
        },
      );
    }
  }

  private fail(m: Member<W, R>, reason: FaultRecord['reason'], message: string): void {
    if (this.closed || !m.worker) return;
    const t = now();
    const record: FaultRecord = {
      lane: m.lane,
      reason,
      message,
      lastSeen: m.lastSeen,
      detectedAt: t,
      replacedAt: null,
    };
    this.faults.push(record);
    m.worker.terminate();
    m.worker = null;
    this.hooks.lost(m.lane, `${reason}: ${message}`);
    this.hooks.emit?.({ lane: m.lane, kind: 'error', t0: t, t1: t, version: -1, meta: { reason, message } });
    this.spawn(m).then(
      () => {
        if (!m.worker) return;
        record.replacedAt = now();
        this.hooks.emit?.({
          lane: m.lane,
          kind: 'restart',
          t0: t,
          t1: record.replacedAt,
          version: -1,
          meta: {
            reason,
            detectMs: Math.round(t - record.lastSeen),
            replaceMs: Math.round(record.replacedAt - t),
          },
        });
      },
      (err: unknown) =>
        this.hooks.onError?.(
          `could not replace ${m.lane}: ${err instanceof Error ? err.message : String(err)}`,
        ),
    );
  }
}
