import { isQuotaError } from '../errors';
import type { LabDB } from './db';
import { trimEvents } from './events-store';
import { trimConsumed } from './trajectories-store';
import { deleteRun, listRuns, milestoneRuleOf, pruneVersions } from './weights-store';

/** What an eviction deleted to make room. */
export interface Eviction {
  /** Consumed trajectories deleted (already trained on). */
  trajectories: number;
  /** Old weight versions deleted (never the newest two of a run, never milestones). */
  versions: number;
  /** Timeline history events deleted (each run keeps its newest `EVENTS_AFTER_EVICTION`). */
  events: number;
}

/** Timeline history events each run keeps through an eviction (a run needs none to resume). */
export const EVENTS_AFTER_EVICTION = 2_000;

/** What an eviction deleted, in words. */
export function describeEviction(
  e: Pick<Eviction, 'trajectories' | 'versions'> & { events?: number },
): string {
  const n = (k: number, one: string, many: string) => `${k} ${k === 1 ? one : many}`;
  return `${n(e.trajectories, 'trained trajectory', 'trained trajectories')}, ${n(e.versions, 'old version', 'old versions')} and ${n(e.events ?? 0, 'old timeline event', 'old timeline events')}`;
}

/** A notice for an eviction: what it deleted to make room for `what`, or that nothing old was left. */
export function evictionNotice(
  e: Pick<Eviction, 'trajectories' | 'versions'> & { events?: number },
  what: string,
): string {
  return e.trajectories + e.versions + (e.events ?? 0) > 0
    ? `Storage was full: deleted ${describeEviction(e)} to make room for ${what}.`
    : `Storage was full, and nothing old was left to delete to make room for ${what}.`;
}

/**
 * Run ids that hold data (versions, trajectories, history) but have no run record: writes that
 * landed after their run was deleted (a late evaluation, a worker's last batch). No run lists
 * them, so nothing else would ever delete them.
 */
export async function orphanRunIds(db: LabDB): Promise<string[]> {
  const found = new Set<string>();
  const tx = db.transaction(['runs', 'weights', 'trajectories', 'metrics', 'events']);
  const known = new Set((await tx.objectStore('runs').getAllKeys()).map(String));
  for (const name of ['weights', 'trajectories', 'metrics', 'events'] as const) {
    // One key per run: from a run's first key the cursor jumps past every key it has.
    let cursor = await tx.objectStore(name).openKeyCursor();
    while (cursor) {
      const runId = String(cursor.key[0]);
      if (!known.has(runId)) found.add(runId);
      cursor = await cursor.continue(name === 'metrics' ? [runId, '\uffff', Infinity] : [runId, Infinity]);
    }
  }
  await tx.done;
  return [...found];
}

/**
 * Makes room without losing a run: deletes the data of runs that no longer exist
 * (`orphanRunIds`), trajectories every run has already trained on, weight versions past the
 * newest two of each run (milestones stay), and each run's timeline history past its newest
 * `EVENTS_AFTER_EVICTION` events. Nothing unconsumed and no version a run resumes from is
 * touched.
 */
export async function evictForSpace(db: LabDB): Promise<Eviction> {
  let trajectories = 0;
  let versions = 0;
  let events = 0;
  for (const runId of await orphanRunIds(db)) {
    const gone = await deleteRun(db, runId, { onlyIfOrphan: true });
    trajectories += gone.trajectories;
    versions += gone.versions;
    events += gone.events;
  }
  for (const run of await listRuns(db)) {
    trajectories += await trimConsumed(db, run.id, 0);
    // The run's rule says which versions are milestones without reading ~1 MB records to learn it.
    versions += (await pruneVersions(db, run.id, 2, -Infinity, milestoneRuleOf(run))).deleted.length;
    events += await trimEvents(db, run.id, EVENTS_AFTER_EVICTION);
  }
  return { trajectories, versions, events };
}

/**
 * Runs a write; when the quota refuses it, evicts (`onEvict` is told what went) and tries once
 * more. A write that still does not fit throws an error that says the storage is full.
 */
export async function withEviction<T>(
  db: LabDB,
  write: () => Promise<T>,
  onEvict: (e: Eviction) => void,
): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (!isQuotaError(err)) throw err;
    const eviction = await evictForSpace(db);
    onEvict(eviction);
    try {
      return await write();
    } catch (again) {
      if (!isQuotaError(again)) throw again;
      const deleted =
        eviction.trajectories + eviction.versions + eviction.events > 0
          ? `even after deleting ${describeEviction(eviction)}`
          : 'and nothing old was left to delete';
      throw new Error(`storage is full ${deleted}: free space for this site (browser settings) and resume`, {
        cause: again,
      });
    }
  }
}
