import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import type { TaskSuite } from '../env/suite';
import type { MlpCheckpoint } from '../policy/mlp';
import type { Checkpoint } from '../policy/weights';
import type { HindsightSnapshot } from '../rl/hindsight';
import type { Trajectory } from '../rl/trajectory';
import type { TimelineEvent } from '../pipeline/events';
import type { EvalPoint, RunProgress, StepReport } from '../pipeline/types';

/** Lifecycle of a training run. */
export type RunStatus = 'created' | 'running' | 'paused' | 'finished' | 'failed';

/** One training run (DESIGN §7 `runs`). */
export interface RunRecord {
  id: string;
  /** Human label shown in the run list. */
  name: string;
  createdAt: number;
  updatedAt: number;
  status: RunStatus;
  /** Newest published weight version, −1 before the first. */
  latestVersion: number;
  /** The full configuration the run was started with (JSON-serialisable). */
  config: Record<string, unknown>;
  /** Where the run stands, saved with every published version (resume reads it). */
  progress?: RunProgress;
  /**
   * What the run trains: the code-writing transformer (absent in records from before custom
   * environments were stored), an MLP on a custom JS environment (DESIGN §3), or nothing: the
   * trainer panel's saved weights, a check of the worker (`TRAINER_CHECK_RUN_ID`).
   */
  kind?: 'code' | 'custom' | 'check';
  /** A finished custom-environment training's returns (random, untrained, trained). */
  result?: CustomRunResult;
}

/**
 * The returns a custom-environment training measured, stored with its run: the baselines once
 * measured (a resumed training reports them), the trained policy's at the end.
 */
export interface CustomRunResult {
  /** Mean return of uniformly random actions. */
  randomReturn: number;
  /** Mean return of the untrained MLP, sampling (absent: a resumed training of an older build). */
  untrainedReturn?: number;
  /** Mean return of the newest version, greedy (absent until the training is measured at its end). */
  trainedReturn?: number;
}

/** One finished episode in the replay buffer (DESIGN §7 `trajectories`, key [runId, seq]). */
export interface TrajectoryRecord {
  runId: string;
  /** Unique within the run; a group's episodes have consecutive seqs. */
  seq: number;
  /** The job (group of episodes of one task) it came from. */
  jobId: number;
  /**
   * 1 once a published version was trained on it (FIFO replay consumes each sample once), or
   * once its group was dropped untrained: more than η versions stale, or pushed out of a full
   * buffer (counted on the dashboard either way).
   */
  consumed: 0 | 1;
  createdAt: number;
  trajectory: Trajectory;
}

/** One published weight version (DESIGN §7 `weights`, key [runId, version]). */
export interface WeightsRecord {
  runId: string;
  version: number;
  createdAt: number;
  checkpoint: Checkpoint;
  /** Metrics at publish time (loss, step ms, …). */
  metrics: Record<string, number>;
  /** Kept past retention (e.g. every 10th version). */
  milestone: boolean;
  /**
   * Per-tensor importance measured at the update that made this version (every
   * `learner.importanceEvery` versions; `rl/importance.ts`), each normalised to its largest.
   */
  importance?: { seed: Record<string, number>; gradient: Record<string, number> };
}

/** One published version of a custom environment's MLP policy (same store, same key). */
export interface MlpWeightsRecord extends Omit<WeightsRecord, 'checkpoint'> {
  checkpoint: MlpCheckpoint;
}

/** A task suite the user imported or wrote (DESIGN §7 `tasks`, key: the suite's name). */
export interface SuiteRecord {
  name: string;
  savedAt: number;
  suite: TaskSuite;
}

/**
 * A point of a run's charts (DESIGN §7 `metrics`, key [runId, kind, version]): a trained step as
 * the run panel charts it, or a greedy evaluation of a version; and the run's hindsight pool.
 * Kept for the run's life, so that a resumed or viewed run shows its whole history and a resumed
 * run trains on the relabelled episodes it had.
 */
export type MetricRecord =
  | { runId: string; kind: 'step'; version: number; step: StepReport }
  | { runId: string; kind: 'eval'; version: number; point: EvalPoint }
  /** The run's hindsight pool as last saved (version 0: one record, overwritten). */
  | { runId: string; kind: 'hindsight'; version: number; pool: HindsightSnapshot };

/** One timeline event of a run (DESIGN §7 `events`, key [runId, seq]); bounded per run. */
export interface EventRecord {
  runId: string;
  /** Order of the event in the run, over all its sessions. */
  seq: number;
  event: TimelineEvent;
}

export interface LabSchema extends DBSchema {
  runs: { key: string; value: RunRecord; indexes: { 'by-updated': number } };
  weights: { key: [string, number]; value: WeightsRecord | MlpWeightsRecord; indexes: { 'by-run': string } };
  tasks: { key: string; value: SuiteRecord };
  trajectories: {
    key: [string, number];
    value: TrajectoryRecord;
    indexes: { 'by-run-consumed': [string, number] };
  };
  metrics: { key: [string, string, number]; value: MetricRecord };
  events: { key: [string, number]; value: EventRecord };
}

export const DB_NAME = 'sandbox-rl-lab';
/** Bump with a new step in the migration ladder below. */
export const DB_VERSION = 5;

export type LabDB = IDBPDatabase<LabSchema>;

/** What a page or worker hears about its connection to the database. */
export interface LabDbHooks {
  /** Another tab holds the database open at an older version: the open waits until that tab closes it. */
  blocked?: () => void;
  /**
   * Another tab upgrades the database (a newer version of the page) or deletes it: this
   * connection was closed for it. `message` says which, for the page.
   */
  closed?: (message: string) => void;
}

/** Said when this page's code is older than the database another tab of a newer page upgraded. */
export const OLDER_PAGE =
  'a newer version of this page, opened in another tab, upgraded its storage: reload this tab to go on';
/** Said when another tab deleted the database under this one. */
export const STORAGE_DELETED = "another tab deleted this page's storage: reload this tab to go on";

/**
 * Opens (and creates or migrates) the one database of the app. The connection closes itself when
 * a newer version of the page needs to upgrade it (otherwise that tab would wait for ever).
 */
export async function openLabDb(name = DB_NAME, hooks: LabDbHooks = {}): Promise<LabDB> {
  let db: LabDB;
  try {
    db = await openDB<LabSchema>(name, DB_VERSION, { upgrade, blocked: () => hooks.blocked?.() });
  } catch (err) {
    if (err instanceof DOMException && err.name === 'VersionError')
      throw new Error(OLDER_PAGE, { cause: err });
    throw err;
  }
  db.addEventListener('versionchange', (e) => {
    db.close();
    hooks.closed?.(e.newVersion === null ? STORAGE_DELETED : OLDER_PAGE);
  });
  return db;
}

/**
 * The connection a page or worker keeps: opened on first use, and again on the use after it was
 * closed for a newer page (which then fails with `OLDER_PAGE`) or after an open failed.
 */
export class LabDbConnection {
  private db: Promise<LabDB> | undefined;

  constructor(
    private readonly hooks: LabDbHooks = {},
    private readonly name = DB_NAME,
  ) {}

  get(): Promise<LabDB> {
    this.db ??= openLabDb(this.name, {
      blocked: this.hooks.blocked,
      closed: (message) => {
        this.db = undefined;
        this.hooks.closed?.(message);
      },
    }).catch((err: unknown) => {
      this.db = undefined;
      throw err;
    });
    return this.db;
  }
}

function upgrade(db: IDBPDatabase<LabSchema>, oldVersion: number): void {
  // Migration ladder: each step upgrades from the version before it, in order.
  if (oldVersion < 1) {
    const runs = db.createObjectStore('runs', { keyPath: 'id' });
    runs.createIndex('by-updated', 'updatedAt');
    const weights = db.createObjectStore('weights', { keyPath: ['runId', 'version'] });
    weights.createIndex('by-run', 'runId');
  }
  if (oldVersion < 2) {
    db.createObjectStore('tasks', { keyPath: 'name' });
  }
  if (oldVersion < 3) {
    const trajectories = db.createObjectStore('trajectories', { keyPath: ['runId', 'seq'] });
    trajectories.createIndex('by-run-consumed', ['runId', 'consumed']);
  }
  if (oldVersion < 4) {
    db.createObjectStore('metrics', { keyPath: ['runId', 'kind', 'version'] });
    db.createObjectStore('events', { keyPath: ['runId', 'seq'] });
  }
  // v5: `runs` may be custom-environment trainings (`kind`), and `weights` their MLP versions. No
  // store changes: the bump closes the connections of older pages, which would list those runs
  // and read their versions as the code-writing policy's.
}
