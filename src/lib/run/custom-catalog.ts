import { DEFAULT_CUSTOM_TRAIN, type CustomTrainConfig } from '../custom/config';
import type { CustomRunResult, RunRecord } from '../storage/db';
import { deleteRun, setRunStatus } from '../storage/weights-store';
import type { RunCatalog } from './catalog';

export { trainingLock } from './catalog';
import type { RunProgress } from '../pipeline/types';

// The custom kind's records (runs of kind 'custom'): the trainings table's rows, a resume as
// stored, and how a training's end is stored. Listing, deletion and locks are the catalog's
// (`RunCatalog` of `CUSTOM_RUNS`).

/** A stored training of the panel (a run of kind 'custom'), for the comparison table. */
export interface CustomTraining {
  runId: string;
  startedAt: number;
  /**
   * finished: measured after its last update (asked for, or a Stop); failed: ended by an error (a
   * crashed worker too); interrupted: the page closed while it trained; running: this page's, now;
   * elsewhere: another tab of the page trains it now (it holds the training's lock).
   */
  status: 'running' | 'elsewhere' | 'finished' | 'failed' | 'interrupted';
  eta: number;
  workers: number;
  /** Versions it published (fewer than asked after a Stop or an error). */
  iterations: number;
  /** Versions it was asked for. */
  asked: number;
  /** Returns measured at its end (absent when it did not finish). */
  result?: CustomRunResult;
  /** The environment's code it trained on. */
  code: string;
  /** Its settings as stored (what a resume trains with). */
  config: Record<string, unknown>;
  /** Seconds it trained. */
  seconds: number;
  /** The next job id of its pipeline (0 when not stored). */
  nextJobId: number;
  /** Its pipeline's counters, over all its sessions. */
  counters: Record<string, number>;
  /** It can go on from its newest version: stopped short of what it was asked, and not running. */
  resumable: boolean;
}

/** How a stored training goes on from its newest version (a resume). */
export interface ResumeStart {
  kind: 'resume';
  config: CustomTrainConfig;
  code: string;
  runId: string;
  /** Its status before the resume: what it keeps when the resume trains nothing. */
  status: RunRecord['status'];
  /** Seconds it had trained. */
  seconds: number;
  /** Its newest stored version as listed (the seeds of the resumed part are offset by it). */
  from: number;
  /** The next job id it gives (job seeds go on, not over again). */
  nextJobId: number;
  /** Its pipeline counters so far (the resumed part's are added). */
  counters: Record<string, number>;
  /** Its stored returns: the baselines it reports, and what it keeps if the resume trains nothing. */
  baselines?: CustomRunResult;
}

/**
 * A stored custom run as a row of the trainings table (`current`: the run this page trains now;
 * `elsewhere`: another tab holds its lock).
 */
export function trainingOf(r: RunRecord, current: string | null, elsewhere = false): CustomTraining {
  const c = r.config;
  const num = (v: unknown) => (typeof v === 'number' ? v : NaN);
  const status: CustomTraining['status'] =
    r.status === 'failed'
      ? 'failed'
      : r.status === 'running' || r.status === 'created'
        ? r.id === current
          ? 'running'
          : elsewhere
            ? 'elsewhere'
            : 'interrupted'
        : 'finished';
  const iterations = Math.max(0, r.latestVersion);
  const asked = num(c.iterations);
  const code = typeof c.code === 'string' ? c.code : '';
  return {
    runId: r.id,
    startedAt: r.createdAt,
    status,
    eta: num(c.eta),
    workers: num(c.workers),
    iterations,
    asked,
    ...(r.result ? { result: r.result } : {}),
    code,
    config: c,
    seconds: r.progress?.seconds ?? 0,
    nextJobId: r.progress?.nextJobId ?? 0,
    counters: { ...r.progress?.counters },
    resumable:
      status !== 'running' && status !== 'elsewhere' && r.latestVersion >= 0 && iterations < asked && !!code,
  };
}

/** How a stored training resumes: its settings and code as stored, and where it stands. */
export function resumeStartOf(t: CustomTraining): ResumeStart {
  const { code: _code, ...stored } = t.config;
  return {
    kind: 'resume',
    config: { ...DEFAULT_CUSTOM_TRAIN, ...stored } as CustomTrainConfig,
    code: t.code,
    runId: t.runId,
    status: t.status === 'failed' ? 'failed' : t.status === 'finished' ? 'finished' : 'running',
    seconds: t.seconds,
    from: t.iterations,
    nextJobId: t.nextJobId,
    counters: t.counters,
    ...(t.result ? { baselines: t.result } : {}),
  };
}

/** How a training ended, as its run is stored. */
export interface CustomEnd {
  /** It published a version past the one it started from (as far as the page knows). */
  trained: boolean;
  /** Why it failed (null: it did not). */
  failure: string | null;
  progress: RunProgress;
  /** Its returns, when it was measured at its end. */
  result?: CustomRunResult;
}

/** The stored trainings of `catalog` (the custom kind's), oldest first (`current`: the run this page trains now). */
export async function customTrainings(
  catalog: RunCatalog,
  current: string | null,
): Promise<CustomTraining[]> {
  const listed = await catalog.list();
  return listed
    .sort((a, b) => a.record.createdAt - b.record.createdAt)
    .map(({ record, elsewhere }) => trainingOf(record, current, elsewhere));
}

/** What a training itself reads and writes of its stored run. */
export interface CustomRunStore {
  /** Takes the training's lock until `until` settles; false when another tab holds it. */
  hold(runId: string, until: Promise<unknown>): Promise<boolean>;
  /** The resume of a training as stored now (read it under its lock); throws when it cannot be resumed. */
  show(runId: string): Promise<ResumeStart>;
  /** Stores a training's baselines as soon as they are measured (a resume reports them). */
  storeBaselines(runId: string, baselines: CustomRunResult): Promise<void>;
  /**
   * Stores how a training ended (its status, progress and returns). A training stopped before
   * its first update trained nothing: its run (version 0 only) goes; a resume (`resumed`) that
   * trained nothing leaves the training as it was.
   */
  settle(runId: string, resumed: ResumeStart | null, end: CustomEnd): Promise<void>;
}

/** The store of the trainings listed by `catalog` (the custom kind's), over its connection and locks. */
export function customRunStore(catalog: RunCatalog): CustomRunStore {
  return {
    hold: (runId, until) => catalog.hold(runId, until),
    show: async (runId) => {
      const record = await (await catalog.database()).get('runs', runId);
      if (!record) throw new Error('it is no longer stored (deleted?)');
      const t = trainingOf(record, null);
      if (!t.resumable) throw new Error(`it is ${t.status}, ${t.iterations} of ${t.asked} iterations`);
      return resumeStartOf(t);
    },
    storeBaselines: async (runId, baselines) => {
      await setRunStatus(await catalog.database(), runId, 'running', { result: baselines });
    },
    settle: async (runId, resumed, end) => {
      const db = await catalog.database();
      const { progress, result } = end;
      // A version the trainer stored but whose answer was lost (a crash) counts as trained too.
      const stored = resumed ? ((await db.get('runs', runId))?.latestVersion ?? resumed.from) : 0;
      const didTrain = end.trained || (resumed !== null && stored > resumed.from);
      if (!didTrain && resumed)
        await setRunStatus(db, runId, resumed.status, resumed.baselines ? { result: resumed.baselines } : {});
      else if (end.failure) await setRunStatus(db, runId, 'failed', { progress });
      else if (!didTrain) await deleteRun(db, runId);
      else await setRunStatus(db, runId, 'finished', { progress, ...(result ? { result } : {}) });
    },
  };
}
