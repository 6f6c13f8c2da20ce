import { shownNumber } from '../errors';
import type { EvalTask } from './evaluate';
import { generateTasks } from './families';
import { generalisationTasks } from './generalisation';
import { parseSuite, type Task, type TaskSuite } from './suite';

/** A suite the page can evaluate: the built-in one (with its split) or a saved one (all held-out). */
export interface SuiteEntry {
  name: string;
  source: 'built-in' | 'saved';
  tasks: EvalTask[];
}

/** Seed of the built-in suite shown in the page. */
export const BUILT_IN_SEED = 1;
export const BUILT_IN_NAME = `built-in (seed ${BUILT_IN_SEED})`;
/** The suite that "Add to my tasks" writes to. */
export const MY_TASKS = 'my tasks';
/** Most sampled episodes per task an evaluation plays (a table of the built-in suite is 258 tasks). */
export const MAX_SAMPLES = 16;

/** The task the editor starts with. */
export const EXAMPLE_TASK: Task = {
  id: 'triple-minus-two',
  level: 'medium',
  examples: [1, 2, 4].map((x) => ({ input: x, output: 3 * x - 2 })),
  hidden: [0, 3, 5, 10].map((x) => ({ input: x, output: 3 * x - 2 })),
};

/** The built-in suite, with its train / held-out split, and its generalisation suite after it. */
export function builtInSuite(): SuiteEntry {
  const tasks = generateTasks(BUILT_IN_SEED);
  return {
    name: BUILT_IN_NAME,
    source: 'built-in',
    tasks: [...tasks, ...generalisationTasks(tasks)].map(({ family: _f, program: _p, ...t }) => t),
  };
}

/** A saved suite: every task is held out (none was trained on). */
export function savedSuite(suite: TaskSuite): SuiteEntry {
  return { name: suite.name, source: 'saved', tasks: suite.tasks.map((t) => ({ ...t, heldOut: true })) };
}

/** The suite file of an entry: tasks without their split (a file has none). */
export function suiteFile(entry: SuiteEntry): TaskSuite {
  return {
    name: entry.name,
    tasks: entry.tasks.map(({ heldOut: _h, generalisation: _g, ...task }) => task),
  };
}

/** The selected suite as a file to download: a name made of the suite's, and its JSON. */
export function exportedSuite(entry: SuiteEntry): { fileName: string; text: string } {
  const base = entry.name.replace(/[^\w.-]+/g, '-').replace(/^-+|-+$/g, '');
  return { fileName: `${base || 'suite'}.json`, text: JSON.stringify(suiteFile(entry), null, 2) };
}

/**
 * Reads a suite file to import: the suite, or why it is not imported (its path and problem; the
 * built-in suite's name is taken).
 */
export function importedSuite(fileName: string, text: string): { suite: TaskSuite } | { problem: string } {
  const parsed = parseSuite(text);
  if (!parsed.ok) return { problem: `${fileName} was not imported: ${parsed.path}: ${parsed.message}` };
  if (parsed.suite.name === BUILT_IN_NAME)
    return {
      problem: `${fileName} was not imported: $.name: "${BUILT_IN_NAME}" is the built-in suite's name (it is always here; to import a copy, give the file's "name" another value: an imported suite is all held out)`,
    };
  return { suite: parsed.suite };
}

/** Why `samples` (sampled episodes per task) is refused, or null: a whole number from 1 to `MAX_SAMPLES`. */
export function samplesProblem(samples: number): string | null {
  return Number.isInteger(samples) && samples >= 1 && samples <= MAX_SAMPLES
    ? null
    : `samples per task must be a whole number from 1 to ${MAX_SAMPLES}, got ${shownNumber(samples)}`;
}

/** Reads one task typed in the editor, checked the way a suite file is. Throws with path and problem. */
export function parseTaskText(text: string): Task {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`the task is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  const parsed = parseSuite(JSON.stringify({ name: 'editor', tasks: [value] }));
  if (!parsed.ok) throw new Error(`${parsed.path.replace('$.tasks[0]', 'task')}: ${parsed.message}`);
  const task = parsed.suite.tasks[0];
  if (!task) throw new Error('no task');
  return task;
}
