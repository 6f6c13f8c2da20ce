import { parseSuite, type Task, type TaskSuite } from '../env/suite';
import type { LabDB, SuiteRecord } from './db';

/** Saves a suite under its name (replacing one of the same name), after validating it whole. */
export async function putSuite(db: LabDB, suite: TaskSuite): Promise<SuiteRecord> {
  const parsed = parseSuite(JSON.stringify(suite));
  if (!parsed.ok) throw new Error(`suite not saved: ${parsed.path}: ${parsed.message}`);
  const record: SuiteRecord = { name: parsed.suite.name, savedAt: Date.now(), suite: parsed.suite };
  await db.put('tasks', record);
  return record;
}

/**
 * Adds `task` to the saved suite `name` (replacing a task with its id; a new suite if there is
 * none), read and written in one transaction: what another tab (or an earlier write of this
 * one) saved in that suite meanwhile is kept. Returns the suite's task count and whether a task
 * was replaced.
 */
export async function addTaskToSuite(
  db: LabDB,
  name: string,
  task: Task,
): Promise<{ tasks: number; replaced: boolean }> {
  const tx = db.transaction('tasks', 'readwrite');
  const saved = await tx.store.get(name);
  const others = (saved?.suite.tasks ?? []).filter((t) => t.id !== task.id);
  const replaced = saved !== undefined && others.length < saved.suite.tasks.length;
  const parsed = parseSuite(JSON.stringify({ name, tasks: [...others, task] }));
  if (!parsed.ok) {
    tx.abort();
    await tx.done.catch(() => undefined);
    throw new Error(`suite not saved: ${parsed.path}: ${parsed.message}`);
  }
  await tx.store.put({ name, savedAt: saved?.savedAt ?? Date.now(), suite: parsed.suite });
  await tx.done;
  return { tasks: parsed.suite.tasks.length, replaced };
}

/** The saved suite `name`, if any (read now: another tab may have saved it). */
export async function getSuite(db: LabDB, name: string): Promise<SuiteRecord | undefined> {
  return db.get('tasks', name);
}

/** Every saved suite, oldest first. */
export async function listSuites(db: LabDB): Promise<SuiteRecord[]> {
  const all = await db.getAll('tasks');
  return all.sort((a, b) => a.savedAt - b.savedAt);
}

export async function deleteSuite(db: LabDB, name: string): Promise<void> {
  await db.delete('tasks', name);
}
