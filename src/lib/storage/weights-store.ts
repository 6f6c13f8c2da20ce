import type { Checkpoint } from '../policy/weights';
import { retentionSchedule, survives } from './retention';
import type { CustomRunResult, LabDB, MlpWeightsRecord, RunRecord, WeightsRecord } from './db';
import type { RunProgress } from '../pipeline/types';

/** True for a version of a custom environment's MLP (not of the code-writing policy). */
export function isMlpRecord(r: WeightsRecord | MlpWeightsRecord): r is MlpWeightsRecord {
  return r.checkpoint.format === 'sandbox-rl-lab/mlp@1';
}

/** A stored version as the code-writing policy's; a custom environment's MLP is refused, saying so. */
function codeRecord(r: WeightsRecord | MlpWeightsRecord | undefined): WeightsRecord | undefined {
  if (r && isMlpRecord(r))
    throw new Error(
      `run ${r.runId} is a custom environment's training: its version ${r.version} is an MLP, not the code-writing policy`,
    );
  return r;
}

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
 * either both are written or neither is. With `consumed`, the trajectories the version was
 * trained on are marked consumed in the same transaction, and `progress` is saved with the run,
 * so a resumed run never trains twice on a sample nor loses one.
 */
export async function putVersion(
  db: LabDB,
  record: WeightsRecord | MlpWeightsRecord,
  extra: { consumed?: readonly number[]; progress?: RunProgress } = {},
): Promise<void> {
  const tx = db.transaction(['runs', 'weights', 'trajectories'], 'readwrite');
  const runs = tx.objectStore('runs');
  const run = await runs.get(record.runId);
  if (!run) {
    tx.done.catch(() => undefined); // the abort below rejects `done`; the throw reports it
    tx.abort();
    throw new Error(`no run ${record.runId}: create it before publishing weights`);
  }
  // The requests go out together (one round trip each way, not one per trajectory).
  const trajectories = tx.objectStore('trajectories');
  const [, ...rows] = await Promise.all([
    tx.objectStore('weights').put(record),
    ...(extra.consumed ?? []).map((seq) => trajectories.get([record.runId, seq])),
  ]);
  await Promise.all(rows.flatMap((t) => (t && !t.consumed ? [trajectories.put({ ...t, consumed: 1 })] : [])));
  await runs.put({
    ...run,
    latestVersion: Math.max(run.latestVersion, record.version),
    updatedAt: Date.now(),
    ...(extra.progress ? { progress: extra.progress } : {}),
  });
  await tx.done;
}

/**
 * Sets a run's status (running, paused, …); for a run that stopped, also its progress and the
 * trajectories it dropped untrained since its last version (marked consumed), in one transaction;
 * for a custom-environment training that ended, the returns it measured.
 */
export async function setRunStatus(
  db: LabDB,
  runId: string,
  status: RunRecord['status'],
  stopped: { progress?: RunProgress; consumed?: readonly number[]; result?: CustomRunResult } = {},
): Promise<void> {
  const tx = db.transaction(['runs', 'trajectories'], 'readwrite');
  const runs = tx.objectStore('runs');
  const trajectories = tx.objectStore('trajectories');
  const [run, ...rows] = await Promise.all([
    runs.get(runId),
    ...(stopped.consumed ?? []).map((seq) => trajectories.get([runId, seq])),
  ]);
  if (run) {
    const { progress, result } = stopped;
    await Promise.all([
      runs.put({
        ...run,
        status,
        updatedAt: Date.now(),
        ...(progress ? { progress } : {}),
        ...(result ? { result } : {}),
      }),
      ...rows.flatMap((t) => (t && !t.consumed ? [trajectories.put({ ...t, consumed: 1 as const })] : [])),
    ]);
  }
  await tx.done;
}

/** The run id under which the trainer panel saves its weights (a check of the worker, not a run). */
export const TRAINER_CHECK_RUN_ID = 'foundation-demo';

/** What a stored run trains; the trainer panel's saves of older builds carry no kind. */
export function runKind(r: RunRecord): NonNullable<RunRecord['kind']> {
  return r.kind ?? (r.id === TRAINER_CHECK_RUN_ID ? 'check' : 'code');
}

/** Every run (or every run of one kind), most recently updated first. */
export async function listRuns(db: LabDB, kind?: NonNullable<RunRecord['kind']>): Promise<RunRecord[]> {
  const all = (await db.getAllFromIndex('runs', 'by-updated')).reverse();
  return kind ? all.filter((r) => runKind(r) === kind) : all;
}

/** The retention rule of a pipeline run: version 0 and every `every`-th version are milestones (kept). */
export function isMilestoneVersion(version: number, every: number): boolean {
  return version === 0 || (every > 0 && version % every === 0);
}

/**
 * A stored run's retention rule, from its settings: which of its versions the schedule keeps
 * while its newest is its `latestVersion` (undefined: settings unknown, the records say).
 */
export function milestoneRuleOf(run: RunRecord): ((version: number) => boolean) | undefined {
  const { keepVersions, milestoneEvery } = run.config;
  if (typeof milestoneEvery !== 'number') return undefined;
  const s = retentionSchedule(typeof keepVersions === 'number' ? keepVersions : 1, milestoneEvery);
  return (v) => survives(s, run.latestVersion, v);
}

/** A record as stored without its optimiser state (the weights a user browses, not a resume point). */
function withoutOptimizer<R extends WeightsRecord | MlpWeightsRecord>(r: R): R {
  const checkpoint = { ...r.checkpoint };
  delete checkpoint.optimizer;
  return { ...r, checkpoint };
}

/** What a retention pass did to a run's versions. */
export interface RetentionPass {
  /** Versions deleted (past the schedule). */
  deleted: number[];
  /** Versions whose optimiser state was dropped (only the newest keeps one). */
  stripped: number[];
  /** The run's newest version when the pass ran (−1: none stored). */
  newest: number;
  /** Every kept version up to this one holds no optimiser state now (the next pass's `strippedThrough`). */
  strippedThrough: number;
}

/**
 * Applies a run's retention: deletes the versions `keep(newest, v)` refuses, then drops the
 * optimiser state of every kept version older than the newest (a resume continues from the
 * newest; an older version restarts Adam). Only versions above `strippedThrough` are read for
 * their optimiser state: a caller that runs a pass after every publish passes the
 * `strippedThrough` of its last pass, so that a pass reads the one version that stopped being the newest. Deletions
 * go in one short transaction, each strip in its own (get and put together: a version deleted
 * meanwhile is not written back).
 */
export async function applyRetention(
  db: LabDB,
  runId: string,
  keep: (newest: number, version: number) => boolean,
  strippedThrough = -Infinity,
): Promise<RetentionPass> {
  const tx = db.transaction('weights', 'readwrite');
  const versions = (await tx.store.getAllKeys(IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]))).map(
    ([, v]) => v,
  );
  const newest = versions.at(-1) ?? -1;
  const deleted = versions.filter((v) => !keep(newest, v));
  await Promise.all([...deleted.map((v) => tx.store.delete([runId, v])), tx.done]);
  const stripped: number[] = [];
  for (const v of versions) {
    if (v <= strippedThrough || v >= newest || deleted.includes(v)) continue;
    const t = db.transaction('weights', 'readwrite');
    const r = await t.store.get([runId, v]);
    if (r?.checkpoint.optimizer) {
      await t.store.put(withoutOptimizer(r));
      stripped.push(v);
    }
    await t.done;
  }
  return { deleted, stripped, newest, strippedThrough: Math.max(strippedThrough, newest - 1) };
}

/**
 * Deletes a run's versions older than its newest `keepLast`, milestones excepted, and returns
 * the deleted version numbers and the newest version it examined. Only versions above `after`
 * are examined: a caller that prunes after every publish passes the `examinedThrough` of its last
 * call, so that a call examines the one version that left the window, not every milestone kept.
 * The milestone flag is in the record, beside 1 MB of weights: a caller that knows the rule its
 * versions were written under passes it as `isMilestone`, and nothing is read.
 */
export async function pruneVersions(
  db: LabDB,
  runId: string,
  keepLast: number,
  after = -Infinity,
  isMilestone?: (version: number) => boolean,
): Promise<{ deleted: number[]; examinedThrough: number }> {
  const tx = db.transaction('weights', 'readwrite');
  const keys = await tx.store.getAllKeys(IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]));
  const old = keys
    .slice(0, Math.max(0, keys.length - keepLast))
    .map(([, v]) => v)
    .filter((v) => v > after);
  const deleted: number[] = [];
  for (const v of old) {
    let keep: boolean;
    if (isMilestone) keep = isMilestone(v);
    else {
      const record = await tx.store.get([runId, v]);
      keep = !record || record.milestone;
    }
    if (!keep) {
      await tx.store.delete([runId, v]);
      deleted.push(v);
    }
  }
  await tx.done;
  return { deleted, examinedThrough: old.at(-1) ?? after };
}

/** One version of the code-writing policy, or undefined. */
export async function getVersion(
  db: LabDB,
  runId: string,
  version: number,
): Promise<WeightsRecord | undefined> {
  return codeRecord(await db.get('weights', [runId, version]));
}

/** The newest stored version of a run, of either kind, or undefined when it has none. */
export async function newestRecord(
  db: LabDB,
  runId: string,
): Promise<WeightsRecord | MlpWeightsRecord | undefined> {
  const range = IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]);
  const cursor = await db.transaction('weights').store.openCursor(range, 'prev');
  return cursor?.value;
}

/** The newest stored version of a run of the code-writing policy, or undefined when it has none. */
export async function latestVersion(db: LabDB, runId: string): Promise<WeightsRecord | undefined> {
  return codeRecord(await newestRecord(db, runId));
}

/** The newest stored full version (not LoRA adapters only) at or below `atMost`: a LoRA run's base. */
export async function latestFullVersion(
  db: LabDB,
  runId: string,
  atMost = Infinity,
): Promise<WeightsRecord | undefined> {
  const range = IDBKeyRange.bound([runId, -Infinity], [runId, atMost]);
  for (let c = await db.transaction('weights').store.openCursor(range, 'prev'); c; c = await c.continue()) {
    const r = codeRecord(c.value);
    if (r && !r.checkpoint.lora) return r;
  }
  return undefined;
}

/** The base a stored LoRA version merges into (its run's newest full version at or below it); undefined for a full version. */
export async function loraBaseOf(db: LabDB, record: WeightsRecord): Promise<Checkpoint | undefined> {
  if (!record.checkpoint.lora) return undefined;
  return (await latestFullVersion(db, record.runId, record.version))?.checkpoint;
}

/** Version numbers stored for a run, ascending. */
export async function listVersions(db: LabDB, runId: string): Promise<number[]> {
  const keys = await db.getAllKeysFromIndex('weights', 'by-run', runId);
  return keys.map((k) => k[1]).sort((a, b) => a - b);
}

/**
 * Deletes a stored run and everything of it — its versions, trajectories, chart history and
 * timeline events — in one transaction: all of it goes, or none. Returns what went. No other run
 * depends on it: a run started from it holds its own copy as version 0. `onlyIfOrphan`: only
 * when no run record of that id exists, checked in the same transaction (an eviction's sweep).
 */
export async function deleteRun(
  db: LabDB,
  runId: string,
  opts: { onlyIfOrphan?: boolean } = {},
): Promise<{ versions: number; trajectories: number; events: number }> {
  const tx = db.transaction(['runs', 'weights', 'trajectories', 'metrics', 'events'], 'readwrite');
  const byRun = IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]);
  const [record, versions, trajectories, events] = await Promise.all([
    opts.onlyIfOrphan ? tx.objectStore('runs').get(runId) : undefined,
    tx.objectStore('weights').count(byRun),
    tx.objectStore('trajectories').count(byRun),
    tx.objectStore('events').count(byRun),
  ]);
  if (record) {
    // Not an orphan after all (a run of that id was stored meanwhile): nothing is deleted.
    await tx.done;
    return { versions: 0, trajectories: 0, events: 0 };
  }
  await Promise.all([
    tx.objectStore('runs').delete(runId),
    tx.objectStore('weights').delete(byRun),
    tx.objectStore('trajectories').delete(byRun),
    // Metric keys are [runId, kind, version]: every kind of the run lies between these two.
    tx.objectStore('metrics').delete(IDBKeyRange.bound([runId, '', -Infinity], [runId, '\uffff', Infinity])),
    tx.objectStore('events').delete(byRun),
    tx.done,
  ]);
  return { versions, trajectories, events };
}
