import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { openLabDb, type LabDB, type MlpWeightsRecord, type RunRecord } from '../storage/db';
import { CUSTOM_RUNS, RunCatalog, type CatalogLocks } from './catalog';
import {
  customRunStore,
  customTrainings,
  trainingLock,
  trainingOf,
  type ResumeStart,
} from './custom-catalog';

const run = (over: Partial<RunRecord>): RunRecord => ({
  id: 'custom-a',
  name: 'custom environment',
  createdAt: 5,
  updatedAt: 6,
  status: 'finished',
  latestVersion: 12,
  config: { eta: 2, workers: 3, iterations: 40, code: 'spec = {}' },
  kind: 'custom',
  ...over,
});

describe('a stored custom training as a row of the trainings table', () => {
  it('says how it ended: finished, failed, training here or in another tab, or interrupted by a closed page', () => {
    const result = { randomReturn: 20, untrainedReturn: 21, trainedReturn: 180 };
    expect(trainingOf(run({ result }), null)).toEqual({
      runId: 'custom-a',
      startedAt: 5,
      status: 'finished',
      eta: 2,
      workers: 3,
      iterations: 12,
      asked: 40,
      result,
      code: 'spec = {}',
      config: { eta: 2, workers: 3, iterations: 40, code: 'spec = {}' },
      seconds: 0,
      nextJobId: 0,
      counters: {},
      resumable: true, // 12 of 40: stopped short
    });
    expect(trainingOf(run({ status: 'failed' }), null).status).toBe('failed');
    expect(trainingOf(run({ status: 'running' }), 'custom-a').status).toBe('running');
    // Left 'running' by a page that closed while it trained.
    expect(trainingOf(run({ status: 'running' }), 'custom-b').status).toBe('interrupted');
    // Another tab trains it: that tab holds its lock (the catalog tells, `customTrainings`).
    expect(trainingOf(run({ status: 'running' }), null, true).status).toBe('elsewhere');
    expect(trainingOf(run({ status: 'running' }), null, false).status).toBe('interrupted');
  });

  it('reads what its settings lack as unknown rather than failing', () => {
    const t = trainingOf(run({ config: {}, latestVersion: -1 }), null);
    expect([t.eta, t.asked, t.iterations, t.code, t.resumable]).toEqual([NaN, NaN, 0, '', false]);
  });

  it('can be resumed when it stopped short of its iterations and nothing trains it now', () => {
    const at = (over: Partial<RunRecord>, current: string | null = null, elsewhere = false) =>
      trainingOf(run(over), current, elsewhere).resumable;
    expect(at({ status: 'running', progress: { seconds: 7 } })).toBe(true); // interrupted
    expect(trainingOf(run({ progress: { seconds: 7, nextJobId: 31 } }), null)).toMatchObject({
      seconds: 7,
      nextJobId: 31,
    });
    expect(at({ status: 'failed' })).toBe(true);
    expect(at({ status: 'running', latestVersion: 0 })).toBe(true); // closed before its first update
    expect(at({ latestVersion: 40 })).toBe(false); // it trained all it was asked
    expect(at({ status: 'running' }, 'custom-a')).toBe(false); // training here now
    expect(at({ status: 'running' }, null, true)).toBe(false); // and in another tab
    expect(at({ latestVersion: -1 })).toBe(false); // no stored version
    expect(at({ config: { eta: 2, workers: 3, iterations: 40 } })).toBe(false); // its code is not stored
  });
});

/** Locks as two tabs see them: `others` are held by another tab; this tab's are recorded while held. */
class FakeLocks implements CatalogLocks {
  readonly held = new Set<string>();
  constructor(readonly others: string[] = []) {}
  async hold(name: string, until: Promise<unknown>): Promise<boolean> {
    if (this.others.includes(name) || this.held.has(name)) return false;
    this.held.add(name);
    void until.finally(() => this.held.delete(name));
    return true;
  }
  async heldElsewhere(): Promise<string[]> {
    return this.others;
  }
  onElsewhereChange(): void {}
}

let n = 0;
async function catalogWith(runs: RunRecord[], locks = new FakeLocks()) {
  const db = await openLabDb(`custom-catalog-${n++}`);
  for (const r of runs) await db.put('runs', r);
  const catalog = new RunCatalog(CUSTOM_RUNS, { get: async () => db }, locks);
  return { db, locks, catalog, store: customRunStore(catalog) };
}

/** Stores version `version` of run `runId` (an MLP of no parameters: only its key counts here). */
async function putMlpVersion(db: LabDB, runId: string, version: number): Promise<void> {
  const record: MlpWeightsRecord = {
    runId,
    version,
    createdAt: 0,
    metrics: {},
    milestone: false,
    checkpoint: {
      format: 'sandbox-rl-lab/mlp@1',
      mlp: { inputs: 1, hidden: 1, actions: 2 },
      params: { entries: [], data: new ArrayBuffer(0) },
      step: version,
    },
  };
  await db.put('weights', record);
}

describe('the catalog of custom runs', () => {
  it('lists the custom runs oldest first, with this page’s and another tab’s trainings', async () => {
    const { catalog, db } = await catalogWith(
      [
        run({ id: 'custom-late', createdAt: 30, status: 'running' }),
        run({ id: 'custom-early', createdAt: 10, status: 'running' }),
        run({ id: 'custom-mid', createdAt: 20, status: 'running' }),
        run({ id: 'run-code', createdAt: 1, kind: 'code' }),
      ],
      new FakeLocks([trainingLock('custom-mid')]),
    );
    const rows = await customTrainings(catalog, 'custom-late');
    expect(rows.map((r) => [r.runId, r.status])).toEqual([
      ['custom-early', 'interrupted'],
      ['custom-mid', 'elsewhere'],
      ['custom-late', 'running'],
    ]);
    db.close();
  });

  it('shows a training as stored now for a resume, and refuses one that cannot go on', async () => {
    const { store, db } = await catalogWith([
      run({
        id: 'custom-a',
        status: 'running',
        progress: { seconds: 9, nextJobId: 4, counters: { trainSteps: 12 } },
      }),
      run({ id: 'custom-done', latestVersion: 40 }),
    ]);
    const resume = await store.show('custom-a');
    expect(resume).toMatchObject({
      kind: 'resume',
      runId: 'custom-a',
      code: 'spec = {}',
      status: 'running',
      from: 12,
      seconds: 9,
      nextJobId: 4,
      counters: { trainSteps: 12 },
    });
    // Its stored settings over the defaults, without its code.
    expect(resume.config).toMatchObject({ eta: 2, workers: 3, iterations: 40 });
    expect('code' in resume.config).toBe(false);
    await expect(store.show('custom-done')).rejects.toThrow('it is finished, 40 of 40 iterations');
    await expect(store.show('custom-gone')).rejects.toThrow('no longer stored');
    db.close();
  });

  it('deletes a training and its versions under its lock, and nothing that another tab trains', async () => {
    const { catalog, db, locks } = await catalogWith(
      [run({ id: 'custom-a' }), run({ id: 'custom-b' })],
      new FakeLocks([trainingLock('custom-b')]),
    );
    await putMlpVersion(db, 'custom-a', 0);
    await putMlpVersion(db, 'custom-a', 12);
    await putMlpVersion(db, 'custom-b', 0);
    expect(await catalog.delete('custom-b')).toEqual({ deleted: false });
    expect(await catalog.delete('custom-a')).toEqual({ deleted: true, versions: 2, trajectories: 0 });
    expect((await customTrainings(catalog, null)).map((r) => r.runId)).toEqual(['custom-b']);
    expect(await db.count('weights')).toBe(1);
    // The lock goes with the deletion: a later resume may take it.
    expect(locks.held.size).toBe(0);
    db.close();
  });

  it('stores how a training ended: finished, failed, deleted when it trained nothing', async () => {
    const { store, db } = await catalogWith([
      run({ id: 'custom-a', status: 'running' }),
      run({ id: 'custom-b', status: 'running' }),
      run({ id: 'custom-c', status: 'running', latestVersion: 0 }),
    ]);
    const progress = { seconds: 3 };
    const result = { randomReturn: 10, untrainedReturn: 11, trainedReturn: 90 };
    await store.settle('custom-a', null, { trained: true, failure: null, progress, result });
    await store.settle('custom-b', null, { trained: true, failure: 'rollout worker 0 crashed', progress });
    await store.settle('custom-c', null, { trained: false, failure: null, progress });
    expect(await db.get('runs', 'custom-a')).toMatchObject({ status: 'finished', result, progress });
    expect(await db.get('runs', 'custom-b')).toMatchObject({ status: 'failed', progress });
    expect(await db.get('runs', 'custom-c')).toBeUndefined();
    db.close();
  });

  it('leaves a resume that trained nothing as it was, and counts a version stored without an answer', async () => {
    const baselines = { randomReturn: 10, untrainedReturn: 11, trainedReturn: 50 };
    const { store, db } = await catalogWith([
      run({ id: 'custom-a', status: 'running', latestVersion: 12 }),
      run({ id: 'custom-b', status: 'running', latestVersion: 13 }),
    ]);
    const resumed = async (runId: string): Promise<ResumeStart> => ({
      ...(await store.show(runId)),
      status: 'finished',
      from: 12,
      baselines,
    });
    const a = await resumed('custom-a');
    const b = await resumed('custom-b');
    // Baselines stored while it set up (its trained return is for an older version).
    await store.storeBaselines('custom-a', { randomReturn: 10 });
    expect((await db.get('runs', 'custom-a'))?.result).toEqual({ randomReturn: 10 });
    await store.settle('custom-a', a, { trained: false, failure: 'stopped', progress: { seconds: 1 } });
    expect(await db.get('runs', 'custom-a')).toMatchObject({ status: 'finished', result: baselines });
    // Version 13 was stored though the page never heard of it: it trained, and failed.
    await store.settle('custom-b', b, { trained: false, failure: 'crashed', progress: { seconds: 1 } });
    expect(await db.get('runs', 'custom-b')).toMatchObject({ status: 'failed' });
    db.close();
  });
});
