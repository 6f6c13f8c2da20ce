import type { LabDB, RunRecord, WeightsRecord } from './db';

/** Creates a run record, or returns the stored one when the id exists. */
export async function ensureRun(
  db: LabDB,
  run: Omit<RunRecord, 'createdAt' | 'updatedAt' | 'latestVersion' | 'status'>,
): Promise<RunRecord> {
  const tx = db.transaction('runs', 'readwrite');
  const existing = await tx.store.get(run.id);
  if (existing) {
    await tx.done;
    return existing;
  }
  const now = Date.now();
  const record: RunRecord = { ...run, createdAt: now, updatedAt: now, latestVersion: -1, status: 'created' };
  await tx.store.put(record);
  await tx.done;
  return record;
}

/**
 * Stores a weight version and moves the run's `latestVersion` forward, in one transaction:
 * either both are written or neither is.
 */
export async function putVersion(db: LabDB, record: WeightsRecord): Promise<void> {
  const tx = db.transaction(['runs', 'weights'], 'readwrite');
  const runs = tx.objectStore('runs');
  const run = await runs.get(record.runId);
  if (!run) {
    tx.done.catch(() => undefined); // the abort below rejects `done`; the throw reports it
    tx.abort();
    throw new Error(`no run ${record.runId}: create it before publishing weights`);
  }
  await tx.objectStore('weights').put(record);
  await runs.put({
    ...run,
    latestVersion: Math.max(run.latestVersion, record.version),
    updatedAt: Date.now(),
  });
  await tx.done;
}

/** One version, or undefined. */
export function getVersion(db: LabDB, runId: string, version: number): Promise<WeightsRecord | undefined> {
  return db.get('weights', [runId, version]);
}

/** The newest stored version of a run, or undefined when it has none. */
export async function latestVersion(db: LabDB, runId: string): Promise<WeightsRecord | undefined> {
  const range = IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]);
  const cursor = await db.transaction('weights').store.openCursor(range, 'prev');
  return cursor?.value;
}

/** Version numbers stored for a run, ascending. */
export async function listVersions(db: LabDB, runId: string): Promise<number[]> {
  const keys = await db.getAllKeysFromIndex('weights', 'by-run', runId);
  return keys.map((k) => k[1]).sort((a, b) => a - b);
}
