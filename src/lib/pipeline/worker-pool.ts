import { errorMessage } from '../errors';
import { now, type Lane } from './events';
import {
  DEFAULT_POOL,
  type FaultRecord,
  type PoolConfig,
  type PoolHooks,
  type PoolWorker,
} from './worker-pool-types';

export { DEFAULT_POOL };
export type { FaultRecord, PoolConfig, PoolHooks, PoolWorker } from './worker-pool-types';

/** A prepared worker and where its crash reports go (they change as it joins and takes a lane). */
interface Prepared<W> {
  worker: W;
  route: { crash: (message: string) => void };
  /** Why a spare died while it waited for a lane (null: alive as far as the pool knows). */
  died: string | null;
}

/** `p`, or a rejection once `ms` pass or `signal` is rejected; `late` gets what `p` gives after that. */
function bounded<T>(
  p: Promise<T>,
  ms: number,
  what: string,
  signal: Promise<never>,
  late: (value: T) => void,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let over = false;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
  });
  void p.then(
    (v) => {
      if (over) late(v);
    },
    () => undefined,
  );
  return Promise.race([p, timeout, signal]).finally(() => {
    over = true;
    clearTimeout(timer);
  });
}

/** A promise that a crash report rejects (a dead worker never answers the call in flight). */
function crashSignal(what: string): { promise: Promise<never>; crash: (message: string) => void } {
  let crash: (message: string) => void = () => undefined;
  const promise = new Promise<never>((_, reject) => {
    crash = (message) => reject(new Error(`${what}: ${message}`));
  });
  promise.catch(() => undefined); // raced, or never looked at once the worker is past this stage
  return { promise, crash };
}

interface Member<W, R> {
  lane: Lane;
  worker: W | null;
  /** Incarnation: a late signal from a replaced worker is ignored. */
  generation: number;
  /** The last sign of life seen (epoch ms). */
  lastSeen: number;
  /** Of the time since, how much the heartbeat rounds came late (not counted against it), ms. */
  excused: number;
  pingSentAt: number | null;
  /** When the last heartbeat was answered (the next goes `pingMs` after the one before). */
  pingAnsweredAt: number;
  /** The last heartbeat's answer. */
  lastReply: R | null;
  /** The worker's progress counter when last read. */
  beacon: number | undefined;
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
  /** Long silences the workers ended by a sign of life, oldest first, within the adapt window. */
  private silences: { at: number; ms: number }[] = [];
  /** When the last heartbeat round ran (0 before the first). */
  private lastBeatAt = 0;

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
      excused: 0,
      pingSentAt: null,
      pingAnsweredAt: 0,
      lastReply: null,
      beacon: undefined,
    }));
  }

  /** Spawns every worker (in parallel), then the spares, and starts the heartbeat. */
  async start(): Promise<void> {
    await Promise.all(this.members.map((m) => this.spawn(m)));
    if (this.closed) return; // closed while starting: no heartbeat to outlive it
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

  /** Starts a worker; a crash or `startMs` without an answer rejects (and terminates it if it comes). */
  private prepare(): Promise<Prepared<W>> {
    const starting = crashSignal('it crashed while starting');
    const route: Prepared<W>['route'] = { crash: starting.crash };
    const giveUp = new AbortController();
    const ready = this.hooks
      .prepare((message) => route.crash(message), giveUp.signal)
      .then((worker) => {
        const prepared: Prepared<W> = { worker, route, died: null };
        // Idle as a spare until it takes a lane: a crash then marks it, and it is not used.
        route.crash = (message) => (prepared.died = message);
        return prepared;
      });
    return bounded(ready, this.config.startMs, 'the worker did not start', starting.promise, (p) =>
      p.worker.terminate(),
    ).catch((err: unknown) => {
      giveUp.abort(err); // a worker that crashed or hangs while it starts never answers: end it
      throw err;
    });
  }

  /** Starts spares up to the configured number (failures are retried at the next refill). */
  private refill(): void {
    while (!this.closed && this.spares.length < this.config.spares) {
      this.spares.push(this.prepare().catch(() => null));
    }
  }

  /**
   * Gives `m` a worker: a spare when one is ready, else a new one; joins it to the run. A worker
   * that crashes, fails or does not answer while it starts or joins is given up; a spare is then
   * followed by a new worker, and a new one by one more try.
   */
  private async spawn(m: Member<W, R>, retries = 1): Promise<void> {
    const generation = ++m.generation;
    const spare = this.spares.shift();
    let prepared = spare ? await spare : null;
    if (prepared?.died != null) {
      prepared.worker.terminate(); // it died while it waited: start one from nothing
      prepared = null;
    }
    const fromSpare = prepared !== null;
    if (!prepared) {
      try {
        prepared = await this.prepare();
      } catch (err) {
        if (retries <= 0 || this.closed) throw err;
        return this.spawn(m, retries - 1);
      }
    }
    const { worker, route } = prepared;
    const joining = crashSignal(`${m.lane} crashed while joining the run`);
    route.crash = joining.crash;
    try {
      await bounded(
        this.hooks.join(worker, m.lane),
        this.config.startMs,
        `${m.lane} did not join the run`,
        joining.promise,
        () => undefined,
      );
    } catch (err) {
      worker.terminate();
      if (this.closed || (!fromSpare && retries <= 0)) throw err;
      // Start one from nothing, in a new generation: a late report of the broken one is not taken
      // for its successor's.
      return this.spawn(m, fromSpare ? retries : retries - 1);
    }
    route.crash = (message) => {
      if (m.generation === generation) this.fail(m, 'crashed', message);
    };
    if (this.closed || m.generation !== generation) {
      worker.terminate();
      return;
    }
    m.worker = worker;
    m.lastSeen = now();
    m.excused = 0;
    m.pingSentAt = null;
    m.pingAnsweredAt = 0;
    m.lastReply = null;
    m.beacon = worker.beacon?.();
    this.hooks.joined(m.lane, worker);
    if (this.timer) this.refill();
  }

  /**
   * Reads the progress counters and sends heartbeats. A worker with a heartbeat outstanding and no
   * sign of life (an answer, a move of its counter) for the hang bound is declared hung, and so is
   * one whose heartbeat has waited `blockedMs` however its counter moves. The bound is `hangMs`,
   * more on a machine where healthy workers pause for long (`adaptFactor`), and `maxHangMs` for a
   * worker without a counter. Time a round came late (the main thread busy: most likely the whole
   * machine, the worker's thread too) is not counted against a worker whose counter stood still,
   * but no silence lasts past `maxHangMs` of wall time, however late the rounds (a hidden tab's
   * throttled timers).
   */
  private beat(): void {
    const t = now();
    // A stall, not the timer's jitter: a round more than one period late (jitter of a few ms each
    // round, excused, would add up to hundreds of ms over a hang).
    const late = this.lastBeatAt > 0 ? Math.max(0, t - this.lastBeatAt - 2 * this.config.heartbeatMs) : 0;
    this.lastBeatAt = t;
    for (const m of this.members) {
      if (!m.worker) continue;
      m.excused = Math.min(t - m.lastSeen, m.excused + late);
      const b = m.worker.beacon?.();
      if (b !== m.beacon) {
        m.beacon = b;
        this.seen(m, t, true);
      }
    }
    const adaptive = this.hangBound(t);
    for (const m of this.members) {
      const w = m.worker;
      if (!w) continue;
      if (m.pingSentAt !== null) {
        const silent = t - m.lastSeen;
        const waiting = t - m.pingSentAt;
        const bound = m.beacon === undefined ? this.config.maxHangMs : adaptive;
        if (silent - m.excused > bound || silent > this.config.maxHangMs)
          this.fail(
            m,
            'hung',
            `no sign of life for ${Math.round(silent)} ms (bound ${Math.round(bound)} ms${m.excused > 0 ? `, ${Math.round(m.excused)} of them the page's own delay` : ''})`,
          );
        else if (waiting > this.config.blockedMs)
          this.fail(m, 'hung', `working, but no heartbeat answered for ${Math.round(waiting)} ms`);
        continue;
      }
      if (t - m.pingAnsweredAt < this.config.pingMs) continue;
      const generation = m.generation;
      m.pingSentAt = t;
      w.ping().then(
        (reply) => {
          if (m.generation !== generation) return;
          const at = now();
          this.seen(m, at, false);
          m.pingSentAt = null;
          m.pingAnsweredAt = at;
          m.lastReply = reply;
        },
        (err: unknown) => {
          if (m.generation === generation) this.fail(m, 'crashed', errorMessage(err));
        },
      );
    }
  }

  /**
   * A sign of life of `m` at `t`. The silence a counter's move ends (less the rounds' lateness)
   * counts towards the hang bound if long; an answer's does not: one queued while the main thread
   * stalled is handled before the late round could excuse the stall.
   */
  private seen(m: Member<W, R>, t: number, counter: boolean): void {
    const ms = t - m.lastSeen - m.excused;
    if (counter && ms * this.config.adaptFactor > this.config.hangMs) this.silences.push({ at: t, ms });
    m.lastSeen = Math.max(m.lastSeen, t);
    m.excused = 0;
  }

  /** No sign of life for longer than this means a hang, ms (for a worker with a progress counter). */
  hangBound(t = now()): number {
    const from = t - this.config.adaptWindowMs;
    while (this.silences.length && (this.silences[0]?.at ?? t) < from) this.silences.shift();
    const longest = this.silences.reduce((a, s) => Math.max(a, s.ms), 0);
    return Math.min(this.config.maxHangMs, Math.max(this.config.hangMs, this.config.adaptFactor * longest));
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
      (err: unknown) => {
        // Once closed (the run stopped), a replacement's late failure is no error of any run.
        if (this.closed) return;
        this.hooks.onError?.(`could not replace ${m.lane}: ${errorMessage(err)}`);
      },
    );
  }
}
