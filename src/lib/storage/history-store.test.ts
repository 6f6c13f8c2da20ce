import 'fake-indexeddb/auto';
import { openDB } from 'idb';
import { describe, expect, it } from 'vitest';
import { EventLog, type TimelineEvent } from '../pipeline/events';
import type { EvalPoint, StepReport } from '../pipeline/types';
import type { StepMetrics } from '../rl/trainer';
import type { Trajectory } from '../rl/trajectory';
import { DB_VERSION, openLabDb, type TrajectoryRecord, type WeightsRecord } from './db';
import { trimEvents } from './events-store';
import { HistoryWriter, loadHistory, POINTS_KEPT, THIN_EVERY, thinPoints } from './history-store';
import { EVENTS_AFTER_EVICTION, evictForSpace } from './quota';
import { deleteRun, ensureRun } from './weights-store';

let dbCount = 0;
const freshDb = () => openLabDb(`history-${dbCount++}`);

const step = (version: number): StepReport => ({
  version,
  episodes: 16,
  meanReturn: version / 10,
  success: 0.25,
  staleness: [0, 1],
  loss: 0.5,
  metrics: { entropy: 1, wMean: 1 } as StepMetrics,
  waitMs: 10,
  trainMs: 100,
  at: 1000 + version,
});
const point = (iteration: number): EvalPoint => ({
  iteration,
  seconds: iteration,
  episodes: 16 * iteration,
  level: 'easy',
  suite: null,
  successTrain: 0.3,
  successHeldOut: 0.2,
  meanRewardTrain: 0.1,
});
const ev = (t: number): TimelineEvent => ({
  lane: 'trainer',
  kind: 'train-step',
  t0: t,
  t1: t + 1,
  version: t,
});
/** The history of a run that has none. */
const NONE = { steps: [], evals: [], events: [], nextEventSeq: 0, hindsight: null };
const hooks = (errors: string[]) => ({ onEvict: () => undefined, onError: (m: string) => errors.push(m) });

describe("a run's stored history", () => {
  it('keeps steps, evaluations and the newest events across sessions, in order', async () => {
    const db = await freshDb();
    const errors: string[] = [];
    const log = new EventLog(4); // the in-memory log keeps 4; the store keeps 6
    const w = new HistoryWriter(db, 'r', { nextEventSeq: 0, pushed: 0 }, hooks(errors), 6);
    for (const v of [1, 2, 3]) w.step(step(v));
    w.evaluation(point(2));
    log.push(ev(1), ev(2), ev(3));
    w.flushEvents(log);
    w.flushEvents(log); // nothing new: nothing written twice
    log.push(ev(4), ev(5), ev(6), ev(7), ev(8));
    w.flushEvents(log); // 8 pushed, 4 held: events 5–8 are written, 4 was dropped from memory unwritten
    await w.settled();
    const first = await loadHistory(db, 'r');
    expect(first.steps.map((s) => s.version)).toEqual([1, 2, 3]);
    expect(first.steps[2]).toEqual(step(3));
    expect(first.evals).toEqual([point(2)]);
    expect(first.events.map((e) => e.t0)).toEqual([2, 3, 5, 6, 7, 8]); // the newest 6 stored
    expect(first.nextEventSeq).toBe(7);

    // A resumed session: a log seeded with the stored events, new ones after them.
    const again = new EventLog(100);
    again.push(...first.events);
    const w2 = new HistoryWriter(
      db,
      'r',
      { nextEventSeq: first.nextEventSeq, pushed: again.pushed },
      hooks(errors),
      6,
    );
    w2.step(step(4));
    // The hindsight pool: one record, the newest saved.
    const pool = (k: string) => ({
      recent: [k, k],
      best: [
        {
          key: k,
          length: 1,
          task: { id: k, level: 'easy' as const, examples: [], hidden: [] },
          trajectory: {} as Trajectory,
        },
      ],
    });
    w2.hindsight(pool('old'));
    w2.hindsight(pool('new'));
    again.push(ev(9));
    w2.flushEvents(again);
    await w2.settled();
    const second = await loadHistory(db, 'r');
    expect(second.steps.map((s) => s.version)).toEqual([1, 2, 3, 4]);
    expect(second.events.map((e) => e.t0)).toEqual([3, 5, 6, 7, 8, 9]);
    expect(second.hindsight).toEqual(pool('new'));
    expect((await loadHistory(db, 'r', { pool: false })).hindsight).toBeNull();
    expect(first.hindsight).toBeNull();
    expect(errors).toEqual([]);
    expect(await loadHistory(db, 'other')).toEqual(NONE);
    db.close();
  });

  it('flushes called while one waits join it: one write of the events, however many calls', async () => {
    // One write per call queued up without end when the storage was slower than the page's
    // flushes, and the steps' chart points waited behind all of them.
    const db = await freshDb();
    const log = new EventLog(100);
    const w = new HistoryWriter(db, 'r', { nextEventSeq: 0, pushed: 0 }, hooks([]), 100);
    const opened: string[] = [];
    const open = db.transaction.bind(db);
    db.transaction = ((stores: Parameters<typeof open>[0], ...rest: []) => {
      opened.push(String(stores));
      return open(stores, ...rest);
    }) as typeof db.transaction;
    for (let v = 1; v <= 5; v++) {
      log.push(ev(v));
      w.flushEvents(log);
      w.step(step(v));
    }
    await w.settled();
    expect(opened.filter((s) => s === 'events')).toHaveLength(1);
    const stored = await loadHistory(db, 'r');
    expect(stored.events.map((e) => e.t0)).toEqual([1, 2, 3, 4, 5]);
    expect(stored.steps.map((s) => s.version)).toEqual([1, 2, 3, 4, 5]);
    expect(stored.nextEventSeq).toBe(5);
    db.close();
  });

  it('says once that it stopped storing when a write fails, and the caller goes on', async () => {
    const db = await freshDb();
    const errors: string[] = [];
    const w = new HistoryWriter(db, 'r', { nextEventSeq: 0, pushed: 0 }, hooks(errors));
    db.close(); // every write now fails
    w.step(step(1));
    w.step(step(2));
    await w.settled();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/history is not stored from here on: /);
  });
});

describe('the migration to the history stores', () => {
  it('adds `metrics` and `events` to a database of the version before, keeping what it held', async () => {
    const name = `history-migrate-${dbCount++}`;
    // The database as version 3 left it: runs, weights, tasks, trajectories, and a run in it.
    const old = await openDB(name, 3, {
      upgrade(db) {
        db.createObjectStore('runs', { keyPath: 'id' }).createIndex('by-updated', 'updatedAt');
        db.createObjectStore('weights', { keyPath: ['runId', 'version'] }).createIndex('by-run', 'runId');
        db.createObjectStore('tasks', { keyPath: 'name' });
        db.createObjectStore('trajectories', { keyPath: ['runId', 'seq'] }).createIndex('by-run-consumed', [
          'runId',
          'consumed',
        ]);
      },
    });
    await old.put('runs', { id: 'kept', updatedAt: 1 });
    old.close();
    expect(DB_VERSION).toBe(5);
    const db = await openLabDb(name);
    expect([...db.objectStoreNames].sort()).toEqual([
      'events',
      'metrics',
      'runs',
      'tasks',
      'trajectories',
      'weights',
    ]);
    expect((await db.get('runs', 'kept'))?.id).toBe('kept');
    expect(await loadHistory(db, 'kept')).toEqual(NONE);
    db.close();
  });
});

describe('an eviction for space', () => {
  it("trims each run's timeline history to its newest events, and nothing a run needs", async () => {
    const db = await freshDb();
    await ensureRun(db, { id: 'r', name: 'r', config: {} });
    const log = new EventLog(EVENTS_AFTER_EVICTION + 50);
    const w = new HistoryWriter(db, 'r', { nextEventSeq: 0, pushed: 0 }, hooks([]));
    w.step(step(1));
    log.push(...Array.from({ length: EVENTS_AFTER_EVICTION + 30 }, (_, i) => ev(i)));
    w.flushEvents(log);
    await w.settled();
    expect(await evictForSpace(db)).toEqual({ trajectories: 0, versions: 0, events: 30 });
    const left = await loadHistory(db, 'r');
    expect(left.events).toHaveLength(EVENTS_AFTER_EVICTION);
    expect(left.events[0]?.t0).toBe(30); // the oldest went
    expect(left.nextEventSeq).toBe(EVENTS_AFTER_EVICTION + 30);
    expect(left.steps).toHaveLength(1); // the chart points stay
    expect(await trimEvents(db, 'r', EVENTS_AFTER_EVICTION)).toBe(0);
    db.close();
  });
});

describe('deleting a run', () => {
  it('deletes its record, versions, trajectories, history and events, and nothing of another run', async () => {
    const db = await freshDb();
    for (const id of ['gone', 'kept']) {
      await ensureRun(db, { id, name: id, config: {} });
      const w = new HistoryWriter(db, id, { nextEventSeq: 0, pushed: 0 }, hooks([]));
      const log = new EventLog(10);
      w.step(step(1));
      w.evaluation(point(1));
      log.push(ev(1), ev(2));
      w.flushEvents(log);
      await w.settled();
      await db.put('weights', {
        runId: id,
        version: 0,
        createdAt: 0,
        checkpoint: {} as WeightsRecord['checkpoint'],
        metrics: {},
        milestone: false,
      });
      await db.put('trajectories', {
        runId: id,
        seq: 0,
        jobId: 0,
        consumed: 0,
        createdAt: 0,
        trajectory: {} as TrajectoryRecord['trajectory'],
      });
    }
    expect(await deleteRun(db, 'gone')).toEqual({ versions: 1, trajectories: 1, events: 2 });
    expect(await db.get('runs', 'gone')).toBeUndefined();
    expect(await loadHistory(db, 'gone')).toEqual(NONE);
    expect(await db.count('trajectories', IDBKeyRange.bound(['gone', -Infinity], ['gone', Infinity]))).toBe(
      0,
    );
    const kept = await loadHistory(db, 'kept');
    expect([kept.steps.length, kept.evals.length, kept.events.length]).toEqual([1, 1, 2]);
    expect(await db.get('runs', 'kept')).toBeDefined();
    expect(await db.count('trajectories')).toBe(1);
    expect(await db.count('weights')).toBe(1);
    db.close();
  });
});

describe("a long run's chart points", () => {
  it('are halved in their older part past the bound, keeping the newest half as they are', async () => {
    const db = await freshDb();
    await ensureRun(db, { id: 'r', name: 'r', config: {} });
    for (let v = 0; v < 12; v++)
      await db.put('metrics', { runId: 'r', kind: 'step', version: v, step: step(v) });
    expect(await thinPoints(db, 'r', 'step', 20)).toBe(0);
    expect(await thinPoints(db, 'r', 'step', 8)).toBe(4);
    expect((await loadHistory(db, 'r')).steps.map((s) => s.version)).toEqual([0, 2, 4, 6, 8, 9, 10, 11]);
  });

  it('stay bounded however long the run: a writer thins them as it goes', async () => {
    const db = await freshDb();
    await ensureRun(db, { id: 'r', name: 'r', config: {} });
    const w = new HistoryWriter(db, 'r', { nextEventSeq: 0, pushed: 0 }, hooks([]));
    const n = 3 * POINTS_KEPT.step;
    for (let v = 1; v <= n; v++) w.step(step(v));
    await w.settled();
    const { steps } = await loadHistory(db, 'r');
    expect(steps.length).toBeLessThanOrEqual(POINTS_KEPT.step + THIN_EVERY);
    // The newest points are all there; the oldest are still represented, at a coarser grain.
    expect(steps.slice(-POINTS_KEPT.step / 2).map((s) => s.version)).toEqual(
      Array.from({ length: POINTS_KEPT.step / 2 }, (_, i) => n - POINTS_KEPT.step / 2 + 1 + i),
    );
    expect(steps[0]?.version).toBe(1);
  });
});
