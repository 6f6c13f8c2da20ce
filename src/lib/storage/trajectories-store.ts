import type { LabDB, TrajectoryRecord } from './db';

/** Writes finished trajectories in one transaction (a rollout worker's batched write). */
export async function putTrajectories(db: LabDB, records: readonly TrajectoryRecord[]): Promise<void> {
  if (records.length === 0) return;
  const tx = db.transaction('trajectories', 'readwrite');
  await Promise.all([...records.map((r) => tx.store.put(r)), tx.done]);
}

/** The run's trajectories no published version has trained on, in seq order. */
export function listUnconsumed(db: LabDB, runId: string): Promise<TrajectoryRecord[]> {
  return db.getAllFromIndex('trajectories', 'by-run-consumed', [runId, 0]);
}

/** Stored trajectories of a run: all of them and those consumed. */
export async function countTrajectories(
  db: LabDB,
  runId: string,
): Promise<{ total: number; consumed: number }> {
  const tx = db.transaction('trajectories');
  const index = tx.store.index('by-run-consumed');
  const [fresh, consumed] = await Promise.all([index.count([runId, 0]), index.count([runId, 1]), tx.done]);
  return { total: fresh + consumed, consumed };
}

/** Every stored seq of a run (tests and the resume check use it). */
export async function listSeqs(db: LabDB, runId: string): Promise<number[]> {
  const range = IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]);
  return (await db.getAllKeys('trajectories', range)).map((k) => k[1]);
}

/** The largest seq and job id stored for a run (−1 when none): a resumed run continues after them. */
export async function lastKeys(db: LabDB, runId: string): Promise<{ seq: number; jobId: number }> {
  const range = IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]);
  const cursor = await db.transaction('trajectories').store.openCursor(range, 'prev');
  return cursor ? { seq: cursor.value.seq, jobId: cursor.value.jobId } : { seq: -1, jobId: -1 };
}

/**
 * The replay ring: deletes the oldest consumed trajectories of a run beyond `keep`; unconsumed
 * ones are never deleted here. Returns how many were deleted.
 */
export async function trimConsumed(db: LabDB, runId: string, keep: number): Promise<number> {
  const tx = db.transaction('trajectories', 'readwrite');
  const index = tx.store.index('by-run-consumed');
  let excess = (await index.count([runId, 1])) - keep;
  let deleted = 0;
  for (let c = await index.openCursor([runId, 1]); c && excess > 0; c = await c.continue()) {
    await c.delete();
    excess -= 1;
    deleted += 1;
  }
  await tx.done;
  return deleted;
}
