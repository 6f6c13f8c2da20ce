import type { LabDB } from './db';
import { trimEvents } from './events-store';
import { trimConsumed } from './trajectories-store';
import { listRuns, milestoneRuleOf, pruneVersions } from './weights-store';

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

/** True for a write refused because the origin's storage quota is full. */
export function isQuotaError(err: unknown): boolean {
  if (!(err instanceof Error) && !(typeof DOMException !== 'undefined' && err instanceof DOMException))
    return false;
  const e = err as { name?: string; message?: string; cause?: unknown };
  if (e.name === 'QuotaExceededError') return true;
  if (/quota/i.test(e.message ?? '')) return true;
  return e.cause !== undefined && isQuotaError(e.cause);
}

/** What an eviction deleted, in words. */
export function describeEviction(
  e: Pick<Eviction, 'trajectories' | 'versions'> & { events?: number },
): string {
  return `${e.trajectories} trained trajectories, ${e.versions} old versions and ${e.events ?? 0} old timeline events`;
}

/**
 * Makes room without losing a run: deletes trajectories every run has already trained on,
 * weight versions past the newest two of each run (milestones stay), and each run's timeline
 * history past its newest `EVENTS_AFTER_EVICTION` events. Nothing unconsumed and no
 * version a run resumes from is touched.
 */
export async function evictForSpace(db: LabDB): Promise<Eviction> {
  let trajectories = 0;
  let versions = 0;
  let events = 0;
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
      throw new Error(
        `storage is full even after deleting ${describeEviction(eviction)}: free space for this site (browser settings) and resume`,
        { cause: again },
      );
    }
  }
}
