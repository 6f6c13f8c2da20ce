import 'fake-indexeddb/auto';
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_ARGS, type ModelArgs } from '../policy/config';
import { initParams } from '../policy/model';
import { packParams, paramsFromCheckpoint } from '../policy/weights';
import { DB_VERSION, LabDbConnection, OLDER_PAGE, STORAGE_DELETED, openLabDb } from './db';
import { initMlp, mlpCheckpoint, snapshotFromCheckpoint, type MlpArgs } from '../policy/mlp';
import { evictForSpace } from './quota';
import {
  ensureRun,
  getVersion,
  latestVersion,
  listRuns,
  listVersions,
  newestRecord,
  putVersion,
  setRunStatus,
  TRAINER_CHECK_RUN_ID,
} from './weights-store';

const small: ModelArgs = { ...DEFAULT_MODEL_ARGS, contextLength: 8, dModel: 16, dMlp: 32 };
let dbCount = 0;
const freshDb = () => openLabDb(`test-${dbCount++}`);

beforeAll(async () => {
  await tf.setBackend('cpu');
});

describe('IndexedDB storage', () => {
  it('saves weight versions and loads the latest back bit-exactly', async () => {
    const db = await freshDb();
    await ensureRun(db, { id: 'r1', name: 'run 1', config: { seed: 1 } });
    const params = initParams(small, 9);
    for (const version of [0, 1, 2]) {
      const checkpoint = {
        format: 'sandbox-rl-lab/weights@1' as const,
        model: small,
        params: await packParams(params),
        step: version,
      };
      await putVersion(db, {
        runId: 'r1',
        version,
        createdAt: Date.now(),
        checkpoint,
        metrics: { loss: 1 / (version + 1) },
        milestone: false,
      });
    }
    expect(await listVersions(db, 'r1')).toEqual([0, 1, 2]);
    expect((await db.get('runs', 'r1'))?.latestVersion).toBe(2);
    const latest = await latestVersion(db, 'r1');
    if (!latest) throw new Error('no latest version');
    expect(latest.version).toBe(2);
    const restored = paramsFromCheckpoint(latest.checkpoint);
    expect(restored.get('head.w')?.arraySync()).toEqual(params.get('head.w')?.arraySync());
    expect(await getVersion(db, 'r1', 7)).toBeUndefined();
    tf.dispose([...params.values(), ...restored.values()]);
    db.close();
  });

  it('refuses weights for an unknown run and writes nothing', async () => {
    const db = await freshDb();
    const params = initParams(small, 1);
    const checkpoint = {
      format: 'sandbox-rl-lab/weights@1' as const,
      model: small,
      params: await packParams(params),
      step: 0,
    };
    await expect(
      putVersion(db, { runId: 'nope', version: 0, createdAt: 0, checkpoint, metrics: {}, milestone: false }),
    ).rejects.toThrow(/no run nope/);
    expect(await db.count('weights')).toBe(0);
    tf.dispose([...params.values()]);
    db.close();
  });

  it('keeps latestVersion monotonic and does not duplicate runs', async () => {
    const db = await freshDb();
    const a = await ensureRun(db, { id: 'r', name: 'a', config: {} });
    const b = await ensureRun(db, { id: 'r', name: 'b', config: {} });
    expect(b.name).toBe(a.name);
    expect(await db.count('runs')).toBe(1);
    db.close();
  });

  it("stores a custom environment's MLP versions beside the code runs, apart from them, and evicts them by its rule", async () => {
    const db = await freshDb();
    await ensureRun(db, { id: 'code', name: 'code', config: {} });
    await ensureRun(db, { id: 'env', name: 'env', config: { milestoneEvery: 10 }, kind: 'custom' });
    const args: MlpArgs = { inputs: 4, hidden: 8, actions: 2 };
    const params = initMlp(args, 3);
    for (let version = 0; version <= 12; version++)
      await putVersion(db, {
        runId: 'env',
        version,
        createdAt: Date.now(),
        checkpoint: await mlpCheckpoint(params, args, version),
        metrics: {},
        milestone: version % 10 === 0,
      });
    expect((await listRuns(db, 'custom')).map((r) => r.id)).toEqual(['env']);
    // A record from before runs had a kind is the code-writing policy's.
    expect((await listRuns(db, 'code')).map((r) => r.id)).toEqual(['code']);
    expect((await listRuns(db)).length).toBe(2);
    // The trainer panel's saves are no run: of kind 'check', and so is an older build's record of them.
    await ensureRun(db, { id: TRAINER_CHECK_RUN_ID, name: TRAINER_CHECK_RUN_ID, config: {} });
    await ensureRun(db, { id: 'check', name: 'check', config: {}, kind: 'check' });
    expect((await listRuns(db, 'code')).map((r) => r.id)).toEqual(['code']);
    expect((await listRuns(db, 'check')).map((r) => r.id).sort()).toEqual(['check', TRAINER_CHECK_RUN_ID]);
    // The newest version comes back as the policy it was; the code policy's readers refuse it.
    const newest = await newestRecord(db, 'env');
    expect(newest?.version).toBe(12);
    if (newest?.checkpoint.format !== 'sandbox-rl-lab/mlp@1') throw new Error('not an MLP record');
    expect(Array.from(snapshotFromCheckpoint(newest.checkpoint).w1)).toEqual(
      Array.from(await (params.get('w1')?.data() ?? [])),
    );
    await expect(latestVersion(db, 'env')).rejects.toThrow(
      "run env is a custom environment's training: its version 12 is an MLP, not the code-writing policy",
    );
    await expect(getVersion(db, 'env', 3)).rejects.toThrow('is an MLP');
    // Eviction keeps the newest two and the milestones (0 and 10) of the custom run too.
    expect((await evictForSpace(db)).versions).toBe(9);
    expect(await listVersions(db, 'env')).toEqual([0, 10, 11, 12]);
    // Its end: status and returns, with its progress.
    await setRunStatus(db, 'env', 'finished', {
      progress: { seconds: 3 },
      result: { randomReturn: 20, untrainedReturn: 22, trainedReturn: 150 },
    });
    const run = await db.get('runs', 'env');
    expect(run?.status).toBe('finished');
    expect(run?.result?.trainedReturn).toBe(150);
    expect(run?.progress?.seconds).toBe(3);
    tf.dispose([...params.values()]);
    db.close();
  });

  it('closes its connection for a newer page in another tab, and waits, saying so, for an older one', async () => {
    // A newer page (DB_VERSION + 1) opens while this one is connected: ours closes, theirs opens.
    const closed: string[] = [];
    const ours = new LabDbConnection({ closed: (m) => closed.push(m) }, 'tabs-1');
    await ours.get();
    const newer = await rawOpen('tabs-1', DB_VERSION + 1);
    expect(closed).toEqual([OLDER_PAGE]);
    // Our next use says why it cannot go on.
    await expect(ours.get()).rejects.toThrow(OLDER_PAGE);
    newer.close();

    // Another tab deletes the database: said as such; the next use opens a fresh one.
    const gone: string[] = [];
    const deleted = new LabDbConnection({ closed: (m) => gone.push(m) }, 'tabs-3');
    await deleted.get();
    await new Promise<void>((resolve, reject) => {
      const req = indexedDB.deleteDatabase('tabs-3');
      req.onsuccess = () => resolve();
      req.onerror = () => reject(req.error ?? new Error('delete failed'));
    });
    expect(gone).toEqual([STORAGE_DELETED]);
    expect((await deleted.get()).objectStoreNames.contains('runs')).toBe(true);

    // An older page that does not close (an earlier build): our open waits, and says so.
    const older = await rawOpen('tabs-2', DB_VERSION - 1);
    let blocked = 0;
    const opening = new LabDbConnection({ blocked: () => blocked++ }, 'tabs-2').get();
    await new Promise((r) => setTimeout(r, 50));
    expect(blocked).toBe(1);
    older.close();
    expect((await opening).version).toBe(DB_VERSION); // then it opens, upgraded
  });
});

/** A plain connection at `version`, as another tab's page would hold (no versionchange handler). */
function rawOpen(name: string, version: number): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(name, version);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('open failed'));
  });
}
