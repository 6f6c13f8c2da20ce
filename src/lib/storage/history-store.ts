import { errorMessage } from '../errors';
import type { TimelineEvent } from '../pipeline/events';
import type { EvalPoint, StepReport } from '../pipeline/types';
import type { HindsightSnapshot } from '../rl/hindsight';
import type { LabDB } from './db';
import { withEviction, type Eviction } from './quota';

/** A running run saves its hindsight pool every this many versions (and at Stop). */
export const POOL_EVERY = 50;

/** Timeline events kept per run (the newest; DESIGN §7: bounded timeline history). */
export const EVENTS_KEPT = 20_000;

/**
 * Chart points kept per run and kind: past this many, the older half is halved (every other
 * point of it deleted), so a long run's charts keep their shape at a coarser grain in a bounded
 * store (a step point is ~1 KB: ≤ ~2 MB a run).
 */
export const POINTS_KEPT = { step: 2_000, eval: 500 } as const;

/** A run's chart points are thinned after this many new ones of a kind (the check reads keys only). */
export const THIN_EVERY = 100;

/**
 * Deletes every other one of a run's older chart points of `kind` when it has more than
 * `keep`: the newest `keep / 2` stay as they are. Returns how many went.
 */
export async function thinPoints(
  db: LabDB,
  runId: string,
  kind: 'step' | 'eval',
  keep: number,
): Promise<number> {
  const tx = db.transaction('metrics', 'readwrite');
  const keys = await tx.store.getAllKeys(
    IDBKeyRange.bound([runId, kind, -Infinity], [runId, kind, Infinity]),
  );
  if (keys.length <= keep) {
    await tx.done;
    return 0;
  }
  const older = keys.slice(0, keys.length - Math.ceil(keep / 2));
  const gone = older.filter((_, i) => i % 2 === 1);
  await Promise.all([...gone.map((k) => tx.store.delete(k)), tx.done]);
  return gone.length;
}

/** A run's stored history: its chart points in version order and its newest timeline events. */
export interface RunHistory {
  steps: StepReport[];
  evals: EvalPoint[];
  events: TimelineEvent[];
  /** The seq the run's next event gets. */
  nextEventSeq: number;
  /** The hindsight pool as last saved (every `POOL_EVERY` versions and at Stop), or null. */
  hindsight: HindsightSnapshot | null;
}

/**
 * Reads a run's history (empty for a run stored before there was one). `pool: false` leaves the
 * hindsight pool unread (null): showing a run needs only its charts and events.
 */
export async function loadHistory(
  db: LabDB,
  runId: string,
  opts: { pool?: boolean } = {},
): Promise<RunHistory> {
  const metrics = (kind: string) =>
    db.getAll('metrics', IDBKeyRange.bound([runId, kind, -Infinity], [runId, kind, Infinity]));
  const [steps, evals, events, pool] = await Promise.all([
    metrics('step'),
    metrics('eval'),
    db.getAll('events', IDBKeyRange.bound([runId, -Infinity], [runId, Infinity])),
    opts.pool === false ? undefined : db.get('metrics', [runId, 'hindsight', 0]),
  ]);
  return {
    steps: steps.flatMap((r) => (r.kind === 'step' ? [r.step] : [])),
    evals: evals.flatMap((r) => (r.kind === 'eval' ? [r.point] : [])),
    events: events.map((r) => r.event),
    nextEventSeq: (events.at(-1)?.seq ?? -1) + 1,
    hindsight: pool?.kind === 'hindsight' ? pool.pool : null,
  };
}

/**
 * Writes a running run's history as it goes: each step and evaluation as it comes, and the
 * timeline's new events in one batch per `flushEvents` (the page calls it on its tick), keeping
 * the newest `EVENTS_KEPT`. Writes run one at a time, in order; a full quota evicts as the
 * pipeline's own writes do. A write that still fails is reported once through `onError` and
 * the run goes on: the history is a record, not something the run needs.
 */
export class HistoryWriter {
  private chain: Promise<void> = Promise.resolve();
  private failed = false;
  /** Events taken from the log, for the flush waiting in the queue (`eventsQueued`). */
  private waitingEvents: { seq: number; event: TimelineEvent }[] = [];
  private eventsQueued = false;
  /** `log.pushed` already written. */
  private written: number;
  private nextSeq: number;

  constructor(
    private readonly db: LabDB,
    readonly runId: string,
    /** The run's next event seq (`RunHistory.nextEventSeq`), and how many of the log's events are already stored. */
    from: { nextEventSeq: number; pushed: number },
    private readonly hooks: { onEvict(e: Eviction): void; onError(message: string): void },
    /** Newest events kept for the run. */
    private readonly keepEvents = EVENTS_KEPT,
  ) {
    this.nextSeq = from.nextEventSeq;
    this.written = from.pushed;
  }

  step(step: StepReport): void {
    this.write((db) => db.put('metrics', { runId: this.runId, kind: 'step', version: step.version, step }));
    this.thin('step');
  }

  evaluation(point: EvalPoint): void {
    this.write((db) =>
      db.put('metrics', { runId: this.runId, kind: 'eval', version: point.iteration, point }),
    );
    this.thin('eval');
  }

  /** Points of each kind written since its last thinning. */
  private sinceThin = { step: 0, eval: 0 };

  /** Every `THIN_EVERY` points of a kind, thins the stored ones past `POINTS_KEPT`. */
  private thin(kind: 'step' | 'eval'): void {
    if (++this.sinceThin[kind] < THIN_EVERY) return;
    this.sinceThin[kind] = 0;
    this.write((db) => thinPoints(db, this.runId, kind, POINTS_KEPT[kind]));
  }

  /** Stores the run's hindsight pool, in place of the one stored before. */
  hindsight(pool: HindsightSnapshot): void {
    this.write((db) => db.put('metrics', { runId: this.runId, kind: 'hindsight', version: 0, pool }));
  }

  /**
   * Stores the events of `log` pushed since the last flush (`events` the newest it holds). They
   * are taken now, and written by the one flush waiting in the queue: flushes called while one
   * waits join it. The page flushes 4 times a second; when the storage is slower than that, one
   * write per call queued up without end, and a step's chart point waited behind all of them (a
   * reload then lost several).
   */
  flushEvents(log: { events: readonly TimelineEvent[]; pushed: number }): void {
    const fresh = Math.min(log.pushed - this.written, log.events.length);
    if (fresh <= 0) return;
    const batch = log.events.slice(log.events.length - fresh);
    this.written = log.pushed;
    const first = this.nextSeq;
    this.nextSeq += batch.length;
    this.waitingEvents.push(...batch.map((event, i) => ({ seq: first + i, event })));
    if (this.eventsQueued) return;
    this.eventsQueued = true;
    const runId = this.runId;
    let rows: { seq: number; event: TimelineEvent }[] | null = null;
    this.write(async (db) => {
      if (rows === null) {
        // Taken once: a write retried after an eviction writes the same rows.
        rows = this.waitingEvents;
        this.waitingEvents = [];
        this.eventsQueued = false;
      }
      if (rows.length === 0) return;
      const tx = db.transaction('events', 'readwrite');
      const puts: Promise<unknown>[] = rows.map(({ seq, event }) => tx.store.put({ runId, seq, event }));
      const oldest = (rows.at(-1)?.seq ?? 0) + 1 - this.keepEvents;
      if (oldest > 0) puts.push(tx.store.delete(IDBKeyRange.bound([runId, -Infinity], [runId, oldest - 1])));
      await Promise.all([...puts, tx.done]);
    });
  }

  /** Resolves when every write asked for so far is done (or has failed). */
  settled(): Promise<void> {
    return this.chain;
  }

  private write(f: (db: LabDB) => Promise<unknown>): void {
    this.chain = this.chain.then(async () => {
      if (this.failed) return;
      try {
        await withEviction(this.db, () => f(this.db), this.hooks.onEvict);
      } catch (err) {
        this.failed = true;
        this.hooks.onError(
          `the run's chart and timeline history is not stored from here on: ${errorMessage(err)}`,
        );
      }
    });
  }
}
