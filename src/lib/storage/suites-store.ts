import { parseSuite, type TaskSuite } from '../env/suite';
import type { LabDB, SuiteRecord } from './db';

/** Saves a suite under its name (replacing one of the same name), after validating it whole. */
export async function putSuite(db: LabDB, suite: TaskSuite): Promise<SuiteRecord> {
  const parsed = parseSuite(JSON.stringify(suite));
  if (!parsed.ok) throw new Error(`suite not saved: ${parsed.path}: ${parsed.message}`);
  const record: SuiteRecord = { name: parsed.suite.name, savedAt: Date.now(), suite: parsed.suite };
  await db.put('tasks', record);
  return record;
}

/** Every saved suite, oldest first. */
export async function listSuites(db: LabDB): Promise<SuiteRecord[]> {
  const all = await db.getAll('tasks');
  return all.sort((a, b) => a.savedAt - b.savedAt);
}

export async function deleteSuite(db: LabDB, name: string): Promise<void> {
  await db.delete('tasks', name);
}
