import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { openLabDb, type LabDB, type WeightsRecord } from './db';
import { retentionSchedule, survives, survivors } from './retention';
import {
  applyRetention,
  deleteRun,
  ensureRun,
  listVersions,
  milestoneRuleOf,
  putVersion,
} from './weights-store';

let n = 0;

const version = (v: number): WeightsRecord => ({
  runId: 'r',
  version: v,
  createdAt: v,
  checkpoint: {
    format: 'sandbox-rl-lab/weights@1',
    model: { vocabSize: 2, contextLength: 2, dModel: 2, nLayers: 1, nHeads: 1, dMlp: 2 },
    params: { entries: [], data: new ArrayBuffer(8) },
    optimizer: { entries: [], data: new ArrayBuffer(16) },
    step: v,
  },
  metrics: {},
  milestone: v % 10 === 0,
});

async function withRun(): Promise<LabDB> {
  const db = await openLabDb(`retention-test-${n++}`);
  await ensureRun(db, { id: 'r', name: 'r', config: { keepVersions: 5, milestoneEvery: 10 } });
  return db;
}

const s = retentionSchedule(5, 10);
const keep = (newest: number, v: number) => survives(s, newest, v);

async function withOptimizer(db: LabDB): Promise<number[]> {
  const all = await db.getAll('weights', IDBKeyRange.bound(['r', -Infinity], ['r', Infinity]));
  return all.filter((r) => r.checkpoint.optimizer).map((r) => r.version);
}

describe('a retention pass over stored versions', () => {
  it('run after every publish, keeps what the schedule keeps and the optimiser state of the newest only', async () => {
    const db = await withRun();
    let through = -Infinity;
    for (let v = 0; v <= 400; v++) {
      await putVersion(db, version(v));
      through = (await applyRetention(db, 'r', keep, through)).strippedThrough;
    }
    expect(await listVersions(db, 'r')).toEqual(survivors(s, 400));
    expect(await withOptimizer(db)).toEqual([400]);
    // The weights of a version whose optimiser state went are intact.
    const r = await db.get('weights', ['r', 300]);
    expect(r?.checkpoint.params.data.byteLength).toBe(8);
    expect(r?.checkpoint.optimizer).toBeUndefined();
  });

  it('catches up in one pass after many publishes (a pass behind, or the first after a resume)', async () => {
    const db = await withRun();
    for (let v = 0; v <= 100; v++) await putVersion(db, version(v));
    const pass = await applyRetention(db, 'r', keep);
    expect(pass.newest).toBe(100);
    expect(await listVersions(db, 'r')).toEqual(survivors(s, 100));
    expect(pass.stripped).toEqual(survivors(s, 100).slice(0, -1));
    expect(await withOptimizer(db)).toEqual([100]);
    // Nothing left to do: a second pass deletes and reads nothing new.
    expect(await applyRetention(db, 'r', keep, pass.strippedThrough)).toEqual({
      deleted: [],
      stripped: [],
      newest: 100,
      strippedThrough: 99,
    });
  });

  it('writes nothing back for a run deleted meanwhile, and does nothing for a run without versions', async () => {
    const db = await withRun();
    await putVersion(db, version(0));
    await putVersion(db, version(1));
    const pass = applyRetention(db, 'r', keep);
    await deleteRun(db, 'r');
    await pass;
    expect(await db.count('weights')).toBe(0);
    expect(await applyRetention(db, 'none', keep)).toMatchObject({ deleted: [], stripped: [], newest: -1 });
  });

  it("an eviction reads the schedule from the run's settings and its newest version", async () => {
    const db = await withRun();
    for (let v = 0; v <= 30; v++) await putVersion(db, version(v));
    const run = await db.get('runs', 'r');
    const rule = run && milestoneRuleOf(run);
    expect(rule).toBeDefined();
    expect([0, 1, 10, 25, 26, 30].map((v) => rule?.(v))).toEqual([true, false, true, false, true, true]);
  });
});
