import type { LabDB } from './db';

/** Deletes a run's oldest stored timeline events beyond its newest `keep`; returns how many went. */
export async function trimEvents(db: LabDB, runId: string, keep: number): Promise<number> {
  const keys = await db.getAllKeys('events', IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]));
  const excess = keys.length - keep;
  const last = keys[excess - 1];
  if (excess <= 0 || !last) return 0;
  await db.delete('events', IDBKeyRange.bound([runId, -Infinity], last));
  return excess;
}
