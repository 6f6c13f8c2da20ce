import type { CurriculumView } from '../env/curriculum';
import { runConfigFromJson, type RunConfig } from '../config/run-config';
import type { LabDB, RunRecord } from '../storage/db';
import { loadHistory, type RunHistory } from '../storage/history-store';
import { countTrajectories, listSeqs, listUnconsumed } from '../storage/trajectories-store';
import { deleteRun, listRuns } from '../storage/weights-store';
import { howLabel, resumable, trainsLabel } from './labels';
import { TabLocks } from './tab-locks';

/** The kinds of stored runs a catalog lists: the code-writing policy's, a custom environment's. */
export type RunKind = 'code' | 'custom';

/** How a kind of run is stored and locked. */
export interface CatalogKind {
  kind: RunKind;
  /** The Web Lock a tab holds while it trains (or deletes) a run of this kind. */
  lock(runId: string): string;
  /** The BroadcastChannel on which the tabs announce their locks of this kind (none: no news). */
  channel?: string;
}

/** The Web Lock a tab holds while it trains a code run (other tabs see it held). */
export const runLock = (runId: string): string => `sandbox-rl-lab/code-run/${runId}`;

/** The Web Lock a tab holds while it trains a custom run (other tabs see it held). */
export const trainingLock = (runId: string): string => `sandbox-rl-lab/custom-training/${runId}`;

/** Code runs as the run panel lists them. */
export const CODE_RUNS: CatalogKind = { kind: 'code', lock: runLock, channel: 'sandbox-rl-lab:run-locks' };

/** Custom environments' trainings as their panel lists them. */
export const CUSTOM_RUNS: CatalogKind = {
  kind: 'custom',
  lock: trainingLock,
  channel: 'sandbox-rl-lab:custom-locks',
};

/** The Web Locks a catalog takes and reads (`TabLocks` in the page; a fake in tests). */
export interface CatalogLocks {
  /** Takes the lock `name` until `until` settles; false when another tab holds it. */
  hold(name: string, until: Promise<unknown>): Promise<boolean>;
  /** Names of the locks other tabs hold now. */
  heldElsewhere(): Promise<string[]>;
  /** Calls `listener` whenever another tab takes or lets go of one of these locks. */
  onElsewhereChange(listener: () => void): void;
}

/** The main thread's one IndexedDB connection, as a catalog uses it. */
export interface Database {
  /** The connection, opened on first use (again after a newer page closed it). */
  get(): Promise<LabDB>;
}

/** A stored run with whether another tab holds its lock now. */
export interface Listed {
  record: RunRecord;
  /** Another tab of the page trains it now (it holds the run's lock). */
  elsewhere: boolean;
}

/** What deleting a stored run did. */
export type Deleted =
  | { deleted: true; versions: number; trajectories: number }
  /** Another tab trains it (holds its lock): nothing was deleted. */
  | { deleted: false };

/**
 * Stored runs of one kind (code runs, custom trainings): list, delete, and the locks that keep
 * two tabs from training one run (`TabLocks`), over the page's one IndexedDB connection
 * (`database`, shared with what the runs store as they train).
 */
export class RunCatalog {
  private readonly locks: CatalogLocks;

  constructor(
    readonly kind: CatalogKind,
    private readonly connection: Database,
    locks?: CatalogLocks,
  ) {
    this.locks = locks ?? new TabLocks(kind.channel);
  }

  /** The page's connection, opened on first use (`LabDbConnection`: again after a newer page closed it). */
  database(): Promise<LabDB> {
    return this.connection.get();
  }

  /** Holds the lock of run `runId` until `until` settles; false when another tab holds it. */
  hold(runId: string, until: Promise<unknown>): Promise<boolean> {
    return this.locks.hold(this.kind.lock(runId), until);
  }

  /** Calls `listener` whenever another tab takes or lets go of a run's lock of this kind. */
  onElsewhereChange(listener: () => void): void {
    this.locks.onElsewhereChange(listener);
  }

  /** The stored runs of this kind, most recently updated first, and whether another tab trains each. */
  async list(): Promise<Listed[]> {
    const db = await this.database();
    const runs = await listRuns(db, this.kind.kind);
    // Best effort: without locks, another tab's run reads as interrupted.
    const locked = await this.locks.heldElsewhere();
    return runs.map((record) => ({ record, elsewhere: locked.includes(this.kind.lock(record.id)) }));
  }

  /**
   * Deletes a stored run and all of it (versions, trajectories, history) under its lock, so that
   * another tab cannot resume it meanwhile; refused when another tab holds the lock.
   */
  async delete(runId: string): Promise<Deleted> {
    let release = () => {};
    const deleting = new Promise<void>((resolve) => (release = resolve));
    if (!(await this.hold(runId, deleting))) return { deleted: false };
    try {
      const gone = await deleteRun(await this.database(), runId);
      return { deleted: true, versions: gone.versions, trajectories: gone.trajectories };
    } finally {
      release();
    }
  }

  /** What the page says of a deleted run. */
  static deletedNotice(runId: string, gone: { versions: number; trajectories: number }): string {
    const n = (k: number, one: string, many: string) => `${k} ${k === 1 ? one : many}`;
    return `Deleted ${runId}: ${n(gone.versions, 'stored version', 'stored versions')} (retention keeps the newest and every milestone) and ${n(gone.trajectories, 'trajectory', 'trajectories')}.`;
  }

  /** Stored seqs of a run's trajectories, all or the unconsumed. */
  async storedSeqs(runId: string, which: 'all' | 'unconsumed' = 'all'): Promise<number[]> {
    const db = await this.database();
    return which === 'all' ? listSeqs(db, runId) : (await listUnconsumed(db, runId)).map((r) => r.seq);
  }
}

/** A stored code run, as the run list shows it. */
export interface RunListEntry {
  id: string;
  status: RunRecord['status'];
  latestVersion: number;
  updatedAt: number;
  trajectories: number;
  unconsumed: number;
  /** What the run trains: `every parameter`, or `LoRA, rank r`. */
  trains: string;
  /** How: `η = 4, decoupled PPO` (tells apart the legs of a race or a sweep). */
  how: string;
  /** Another tab of the page trains it now (it holds the run's lock): no Resume, no Delete here. */
  elsewhere: boolean;
  /**
   * It can go on from its newest version: it was running when the page closed, was paused, or
   * failed (a full quota, a crash: what it stored is intact), and no tab trains it now.
   */
  resumable: boolean;
}

/** The run list's entries of the stored code runs (`running`: the id of the run this page trains). */
export async function codeRunEntries(catalog: RunCatalog, running: string | null): Promise<RunListEntry[]> {
  const db = await catalog.database();
  return Promise.all(
    (await catalog.list()).map(async ({ record: r, elsewhere }) => {
      const c = await countTrajectories(db, r.id);
      const settings = runConfigFromJson(r.config);
      return {
        id: r.id,
        status: r.status,
        latestVersion: r.latestVersion,
        updatedAt: r.updatedAt,
        trajectories: c.total,
        unconsumed: c.total - c.consumed,
        trains: trainsLabel(settings),
        how: howLabel(settings),
        elsewhere,
        resumable: resumable(r, elsewhere, running),
      };
    }),
  );
}

/** A stored code run shown without running it: its settings, history, and where its curriculum stood. */
export interface ShownRun {
  record: RunRecord;
  settings: RunConfig;
  history: RunHistory;
  /** Null where the settings are ones this page can no longer build a run from. */
  curriculum: CurriculumView | null;
}

/** Reads a stored code run to show it (null: no such run). */
export async function showCodeRun(db: LabDB, runId: string): Promise<ShownRun | null> {
  const record = await db.get('runs', runId);
  if (!record) return null;
  const history = await loadHistory(db, runId, { pool: false });
  const settings = runConfigFromJson(record.config);
  // Where the curriculum stood takes the run's job source: the pipeline's chunk, not the main bundle.
  const { jobSourceOf } = await import('./pipeline');
  let curriculum: CurriculumView | null;
  try {
    curriculum = jobSourceOf(settings, record.progress).curriculum.view();
  } catch {
    curriculum = null; // settings this page can no longer build a run from
  }
  return { record, settings, history, curriculum };
}
