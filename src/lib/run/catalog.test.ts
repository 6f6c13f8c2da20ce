import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { defaultRunConfig, runConfigToJson, withOverrides } from '../config/run-config';
import { openLabDb, type LabDB } from '../storage/db';
import { ensureRun, setRunStatus } from '../storage/weights-store';
import { CODE_RUNS, codeRunEntries, RunCatalog, runLock, showCodeRun } from './catalog';
import { TabLocks } from './tab-locks';

let n = 0;

/** Locks of which the test says which another tab holds. */
class FakeLocks extends TabLocks {
  elsewhere: string[] = [];
  override hold(name: string): Promise<boolean> {
    return Promise.resolve(!this.elsewhere.includes(name));
  }
  override heldElsewhere(): Promise<string[]> {
    return Promise.resolve(this.elsewhere);
  }
}

async function fixture() {
  const db: LabDB = await openLabDb(`catalog-test-${n++}`);
  const locks = new FakeLocks();
  const catalog = new RunCatalog(CODE_RUNS, { get: async () => db }, locks);
  const s = defaultRunConfig(2);
  await ensureRun(db, { id: 'run-a', name: 'run-a', config: runConfigToJson(s), kind: 'code' });
  await ensureRun(db, {
    id: 'run-b',
    name: 'run-b',
    config: runConfigToJson(
      withOverrides(s, { pipeline: { eta: 0 }, policy: { lora: { rank: 4, alpha: 8 } } }),
    ),
    kind: 'code',
  });
  await ensureRun(db, { id: 'custom-c', name: 'custom-c', config: {}, kind: 'custom' });
  return { db, locks, catalog };
}

describe('RunCatalog', () => {
  it('lists the runs of its kind, with labels, counts, and who trains them', async () => {
    const f = await fixture();
    await setRunStatus(f.db, 'run-a', 'paused');
    const a0 = await f.db.get('runs', 'run-a');
    if (a0) await f.db.put('runs', { ...a0, latestVersion: 3 });
    f.locks.elsewhere = [runLock('run-b')];
    const entries = await codeRunEntries(f.catalog, null);
    expect(entries.map((e) => e.id).sort()).toEqual(['run-a', 'run-b']);
    const a = entries.find((e) => e.id === 'run-a');
    const b = entries.find((e) => e.id === 'run-b');
    expect(a).toMatchObject({
      status: 'paused',
      resumable: true,
      elsewhere: false,
      trains: 'every parameter',
    });
    expect(b).toMatchObject({ elsewhere: true, resumable: false, how: 'η = 0, decoupled PPO' });
    expect(b?.trains).toBe('LoRA, rank 4');
    // The run this page trains is not resumable here either.
    expect((await codeRunEntries(f.catalog, 'run-a')).find((e) => e.id === 'run-a')?.resumable).toBe(false);
  });

  it('deletes a run and all of it, unless another tab holds its lock', async () => {
    const f = await fixture();
    expect(await f.catalog.delete('run-a')).toEqual({ deleted: true, versions: 0, trajectories: 0 });
    expect(await f.db.get('runs', 'run-a')).toBeUndefined();
    f.locks.elsewhere = [runLock('run-b')];
    expect(await f.catalog.delete('run-b')).toEqual({ deleted: false });
    expect(await f.db.get('runs', 'run-b')).toBeDefined();
  });

  it('shows a stored run: its settings, history and curriculum', async () => {
    const f = await fixture();
    const shown = await showCodeRun(f.db, 'run-b');
    expect(shown?.settings.pipeline.eta).toBe(0);
    expect(shown?.history.steps).toEqual([]);
    expect(shown?.curriculum?.level).toBeDefined();
    expect(await showCodeRun(f.db, 'run-none')).toBeNull();
  });
});
