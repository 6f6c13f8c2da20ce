import 'fake-indexeddb/auto';
import { describe, expect, it, vi } from 'vitest';
import type { Trajectory } from '../rl/trajectory';
import { openLabDb, type LabDB, type TrajectoryRecord, type WeightsRecord } from './db';
import { evictForSpace, orphanRunIds, withEviction } from './quota';
import {
  countTrajectories,
  lastKeys,
  listSeqs,
  listUnconsumed,
  putTrajectories,
  trimConsumed,
} from './trajectories-store';
import {
  deleteRun,
  ensureRun,
  listVersions,
  loraBaseOf,
  pruneVersions,
  putVersion,
  setRunStatus,
} from './weights-store';

let n = 0;
const freshDb = () => openLabDb(`traj-test-${n++}`);

const traj = (seq: number): Trajectory => ({
  taskId: `t${seq}`,
  level: 'easy',
  group: 'g',
  tokens: [1, 2, 3],
  owned: [0, 1, 1],
  rewards: [0, 0, 1],
  logProbs: [0, -0.5, -0.1],
  values: [0, 0.1, 0.2],
  versions: [-1, 3, 4],
  legal: new Uint8Array([1, 0, 1]),
  solved: seq % 2 === 0,
  turns: 1,
  return: 1,
  parts: { pass: 1, ranOk: 0, closeness: 0, turnCost: 0, noSubmit: 0, total: 1 },
});

const record = (runId: string, seq: number, consumed: 0 | 1 = 0): TrajectoryRecord => ({
  runId,
  seq,
  jobId: Math.floor(seq / 2),
  consumed,
  createdAt: seq,
  trajectory: traj(seq),
});

const version = (runId: string, v: number, milestone = false): WeightsRecord => ({
  runId,
  version: v,
  createdAt: v,
  checkpoint: {
    format: 'sandbox-rl-lab/weights@1',
    model: { vocabSize: 2, contextLength: 2, dModel: 2, nLayers: 1, nHeads: 1, dMlp: 2 },
    params: { entries: [], data: new ArrayBuffer(8) },
    step: v,
  },
  metrics: {},
  milestone,
});

async function withRun(): Promise<LabDB> {
  const db = await freshDb();
  await ensureRun(db, { id: 'r', name: 'r', config: {} });
  return db;
}

describe('trajectories store', () => {
  it('stores trajectories exactly and lists the unconsumed ones in seq order', async () => {
    const db = await withRun();
    await putTrajectories(db, [record('r', 2), record('r', 0), record('r', 1), record('other', 0)]);
    const fresh = await listUnconsumed(db, 'r');
    expect(fresh.map((r) => r.seq)).toEqual([0, 1, 2]);
    expect(fresh[1]?.trajectory).toEqual(traj(1));
    expect(fresh[1]?.trajectory.legal).toBeInstanceOf(Uint8Array);
    expect(await countTrajectories(db, 'r')).toEqual({ total: 3, consumed: 0 });
    expect(await lastKeys(db, 'r')).toEqual({ seq: 2, jobId: 1 });
    expect(await lastKeys(db, 'none')).toEqual({ seq: -1, jobId: -1 });
  });

  it('publishing a version marks what it trained on consumed, in the same transaction', async () => {
    const db = await withRun();
    await putTrajectories(
      db,
      [0, 1, 2, 3].map((s) => record('r', s)),
    );
    await putVersion(db, version('r', 1), { consumed: [0, 1], progress: { seconds: 12 } });
    expect((await listUnconsumed(db, 'r')).map((r) => r.seq)).toEqual([2, 3]);
    expect(await countTrajectories(db, 'r')).toEqual({ total: 4, consumed: 2 });
    expect((await db.get('runs', 'r'))?.progress?.seconds).toBe(12);
  });

  it('a version for an unknown run writes nothing, consumed marks included', async () => {
    const db = await withRun();
    await putTrajectories(db, [record('r', 0)]);
    await expect(putVersion(db, version('nope', 1), { consumed: [0] })).rejects.toThrow(/no run nope/);
    expect(await countTrajectories(db, 'r')).toEqual({ total: 1, consumed: 0 });
  });

  it('the replay ring trims the oldest consumed trajectories only', async () => {
    const db = await withRun();
    await putTrajectories(db, [record('r', 0, 1), record('r', 1, 1), record('r', 2, 0), record('r', 3, 1)]);
    expect(await trimConsumed(db, 'r', 1)).toBe(2);
    expect(await listSeqs(db, 'r')).toEqual([2, 3]);
  });
});

describe('retention and a full quota', () => {
  it('keeps the newest versions and milestones', async () => {
    const db = await withRun();
    for (const v of [0, 1, 2, 3, 4, 5]) await putVersion(db, version('r', v, v === 0 || v === 3));
    expect(await pruneVersions(db, 'r', 2)).toEqual({ deleted: [1, 2], examinedThrough: 3 });
    expect(await listVersions(db, 'r')).toEqual([0, 3, 4, 5]);
  });

  it('with the milestone rule given, decides by the rule without reading the records', async () => {
    const db = await withRun();
    // The stored flags say no milestone but 0; the rule (every 2nd) is what the caller wrote under.
    for (const v of [0, 1, 2, 3, 4, 5]) await putVersion(db, version('r', v, v === 0));
    expect(await pruneVersions(db, 'r', 2, -Infinity, (v) => v % 2 === 0)).toEqual({
      deleted: [1, 3],
      examinedThrough: 3,
    });
    expect(await listVersions(db, 'r')).toEqual([0, 2, 4, 5]);
  });

  it('examines only versions past `after`, as a caller pruning after every publish asks', async () => {
    const db = await withRun();
    for (const v of [0, 1, 2, 3, 4]) await putVersion(db, version('r', v, v === 0));
    // Versions up to 1 were examined before (say 1 was kept then): they are left alone.
    expect(await pruneVersions(db, 'r', 2, 1)).toEqual({ deleted: [2], examinedThrough: 2 });
    expect(await listVersions(db, 'r')).toEqual([0, 1, 3, 4]);
    await putVersion(db, version('r', 5, false));
    expect(await pruneVersions(db, 'r', 2, 2)).toEqual({ deleted: [3], examinedThrough: 3 });
    // Nothing new left the window: nothing is read or deleted, and the mark stays.
    expect(await pruneVersions(db, 'r', 2, 3)).toEqual({ deleted: [], examinedThrough: 3 });
    expect(await listVersions(db, 'r')).toEqual([0, 1, 4, 5]);
  });

  it('a write refused by the quota evicts trained trajectories and old versions, then succeeds', async () => {
    const db = await withRun();
    await putTrajectories(db, [record('r', 0, 1), record('r', 1, 0)]);
    for (const v of [0, 1, 2, 3]) await putVersion(db, version('r', v, v === 0));
    let refusals = 1;
    const evictions: { trajectories: number; versions: number; events: number }[] = [];
    const result = await withEviction(
      db,
      async () => {
        if (refusals-- > 0) throw new DOMException('full', 'QuotaExceededError');
        await putTrajectories(db, [record('r', 2)]);
        return 'written';
      },
      (e) => evictions.push(e),
    );
    expect(result).toBe('written');
    expect(evictions).toEqual([{ trajectories: 1, versions: 1, events: 0 }]);
    // The unconsumed trajectory, the new one, the milestone and the newest two versions remain.
    expect(await listSeqs(db, 'r')).toEqual([1, 2]);
    expect(await listVersions(db, 'r')).toEqual([0, 2, 3]);
  });

  it("an eviction knows a pipeline run's milestones from its settings, reading no weights", async () => {
    const db = await freshDb();
    await ensureRun(db, { id: 'r', name: 'r', config: { milestoneEvery: 10 } });
    for (const v of [0, 10, 20, 21, 22, 23, 24]) await putVersion(db, version('r', v, v % 10 === 0));
    const get = vi.spyOn(IDBObjectStore.prototype, 'get');
    try {
      expect((await evictForSpace(db)).versions).toBe(2); // 21 and 22
      expect(get.mock.contexts.filter((store) => (store as IDBObjectStore).name === 'weights')).toEqual([]);
    } finally {
      get.mockRestore();
    }
    expect(await listVersions(db, 'r')).toEqual([0, 10, 20, 23, 24]);
  });

  it('an eviction deletes the data of runs that no longer exist, and nothing of the others', async () => {
    const db = await withRun();
    await putTrajectories(db, [record('r', 0), record('r', 1, 1)]);
    await putVersion(db, version('r', 0, true));
    // Written after run "gone" was deleted (a late batch, a late evaluation): no run lists them.
    await putTrajectories(db, [record('gone', 0), record('gone', 1)]);
    await db.put('weights', version('gone', 4));
    const point = { iteration: 4, seconds: 1, episodes: 8, level: 'easy' as const, suite: null };
    const evalPoint = { ...point, successTrain: 0.5, successHeldOut: null, meanRewardTrain: 0.1 };
    await db.put('metrics', { runId: 'gone', kind: 'eval', version: 4, point: evalPoint });
    const event = { lane: 'trainer' as const, kind: 'init' as const, t0: 0, t1: 1, version: -1 };
    await db.put('events', { runId: 'gone', seq: 0, event });
    await db.put('events', { runId: 'zz-gone-too', seq: 3, event });
    expect((await orphanRunIds(db)).sort()).toEqual(['gone', 'zz-gone-too']);
    expect(await evictForSpace(db)).toEqual({ trajectories: 3, versions: 1, events: 2 });
    expect(await orphanRunIds(db)).toEqual([]);
    expect(await db.count('metrics')).toBe(0);
    expect(await db.count('events')).toBe(0);
    // Run r keeps its unconsumed trajectory and its version (its trained trajectory went).
    expect(await listSeqs(db, 'r')).toEqual([0]);
    expect(await listVersions(db, 'r')).toEqual([0]);
    // A run stored meanwhile under an id the sweep found is no orphan: nothing of it goes.
    await putTrajectories(db, [record('late', 0)]);
    await ensureRun(db, { id: 'late', name: 'late', config: {} });
    expect(await deleteRun(db, 'late', { onlyIfOrphan: true })).toEqual({
      versions: 0,
      trajectories: 0,
      events: 0,
    });
    expect(await listSeqs(db, 'late')).toEqual([0]);
  });

  it('a write that still does not fit says the storage is full', async () => {
    const db = await withRun();
    await expect(
      withEviction(
        db,
        async () => {
          throw new DOMException('full', 'QuotaExceededError');
        },
        () => undefined,
      ),
    ).rejects.toThrow(/storage is full/);
    expect(await evictForSpace(db)).toEqual({ trajectories: 0, versions: 0, events: 0 });
  });
});

describe('the base of a LoRA version', () => {
  it('is the newest full version at or below it; a full version has none', async () => {
    const db = await withRun();
    const lora = (v: number): WeightsRecord => {
      const r = version('r', v);
      return { ...r, checkpoint: { ...r.checkpoint, lora: { rank: 1, alpha: 2 } } };
    };
    for (const r of [version('r', 0), lora(1), version('r', 2), lora(3)]) await putVersion(db, r);
    expect((await loraBaseOf(db, lora(3)))?.step).toBe(2);
    expect((await loraBaseOf(db, lora(1)))?.step).toBe(0);
    expect(await loraBaseOf(db, version('r', 2))).toBeUndefined();
  });
});

describe('a stopped run', () => {
  it('records its status and progress, and marks the samples it dropped untrained consumed, together', async () => {
    const db = await withRun();
    await putTrajectories(db, [record('r', 0), record('r', 1), record('r', 2)]);
    await setRunStatus(db, 'r', 'paused', { progress: { seconds: 12 }, consumed: [0, 2, 9] });
    const run = await db.get('runs', 'r');
    expect(run?.status).toBe('paused');
    expect(run?.progress?.seconds).toBe(12);
    expect((await listUnconsumed(db, 'r')).map((t) => t.seq)).toEqual([1]);
  });
});
