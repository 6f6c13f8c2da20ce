/** Difficulty level of a task (curriculum: easy → medium → hard). */
export type Level = 'easy' | 'medium' | 'hard';

export const LEVELS: readonly Level[] = ['easy', 'medium', 'hard'];

/** One input/output pair of a task. */
export interface Example {
  input: number;
  output: number;
}

/**
 * What a task shows and what `<run>` answers (DESIGN §3.1). `examples`: the observation shows
 * enough examples to write the program, and `<run>` returns the program's outputs on them.
 * `tooluse`: the observation shows too little to pin the program down, and `<run>` runs it on the
 * task's `tests` and reports how many pass and the first failing ones.
 */
export type TaskKind = 'examples' | 'tooluse';

export const TASK_KINDS: readonly TaskKind[] = ['examples', 'tooluse'];

/**
 * How the built-in tasks split into training and held-out (`env/task-kinds.ts`): a seeded quarter
 * of each of the eight families, or held-out combinations of parts over the procedural function
 * space (`env/compositional.ts`).
 */
export type TaskSplit = 'families' | 'compositional';

export const TASK_SPLITS: readonly TaskSplit[] = ['families', 'compositional'];

/** A task: write `f` that maps every input to its output. */
export interface Task {
  id: string;
  level: Level;
  /** Absent: `examples` (every task stored before tool-use tasks existed). */
  kind?: TaskKind;
  /** Shown to the policy in the observation (and, for the `examples` kind, used by `<run>`). */
  examples: Example[];
  /** The tests `<run>` checks a program against (the `tooluse` kind only; required there). */
  tests?: Example[];
  /** Used only by `<submit>`: the reward is the fraction of these passed. */
  hidden: Example[];
  /**
   * A start near the goal (tool-use training jobs only, never stored): a first program already
   * run, with its outputs on the tests; the episode begins at the revise turn with its report.
   */
  opening?: { program: string; outputs: number[] };
}

/** A task's kind: `examples` unless it says otherwise. */
export const kindOf = (t: Pick<Task, 'kind'>): TaskKind => t.kind ?? 'examples';

/** A task suite file: `{ name, tasks }`. */
export interface TaskSuite {
  name: string;
  tasks: Task[];
}

/** The outcome of reading a suite file: the suite, or the first problem and where it is. */
export type SuiteParse = { ok: true; suite: TaskSuite } | { ok: false; path: string; message: string };

class SuiteError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function field(obj: Record<string, unknown>, key: string, path: string): unknown {
  if (!(key in obj)) throw new SuiteError(`${path}.${key}`, `missing field "${key}"`);
  return obj[key];
}

function examples(value: unknown, path: string): Example[] {
  if (!Array.isArray(value)) throw new SuiteError(path, 'must be an array of {input, output}');
  if (value.length === 0) throw new SuiteError(path, 'must not be empty');
  return value.map((ex, i) => {
    const p = `${path}[${i}]`;
    if (!isRecord(ex)) throw new SuiteError(p, 'must be an object {input, output}');
    const out: Example = { input: 0, output: 0 };
    for (const key of ['input', 'output'] as const) {
      const v = field(ex, key, p);
      if (typeof v !== 'number') throw new SuiteError(`${p}.${key}`, `must be a number, got ${typeof v}`);
      if (!Number.isFinite(v)) throw new SuiteError(`${p}.${key}`, `must be a finite number, got ${v}`);
      out[key] = v;
    }
    return out;
  });
}

/** Task ids of relabelled tasks (hindsight: a program's own outputs) start with this; no suite may use it. */
export const RELABELLED_PREFIX = 'hindsight:';

/** Checks a parsed value is a task suite; throws a `SuiteError` naming the first problem. */
function toSuite(value: unknown): TaskSuite {
  if (!isRecord(value)) throw new SuiteError('$', 'a suite must be an object {name, tasks}');
  const name = field(value, 'name', '$');
  if (typeof name !== 'string' || !name.trim()) throw new SuiteError('$.name', 'must be a non-empty string');
  const tasks = field(value, 'tasks', '$');
  if (!Array.isArray(tasks)) throw new SuiteError('$.tasks', 'must be an array');
  if (tasks.length === 0) throw new SuiteError('$.tasks', 'must not be empty');
  const seen = new Set<string>();
  return {
    name,
    tasks: tasks.map((t, i) => {
      const p = `$.tasks[${i}]`;
      if (!isRecord(t)) throw new SuiteError(p, 'must be an object {id, level, examples, hidden}');
      const id = field(t, 'id', p);
      if (typeof id !== 'string' || !id.trim()) throw new SuiteError(`${p}.id`, 'must be a non-empty string');
      if (seen.has(id)) throw new SuiteError(`${p}.id`, `duplicate task id "${id}"`);
      if (id.startsWith(RELABELLED_PREFIX))
        throw new SuiteError(
          `${p}.id`,
          `task id "${id}": ids starting "${RELABELLED_PREFIX}" are reserved for relabelled tasks`,
        );
      seen.add(id);
      const level = field(t, 'level', p);
      if (typeof level !== 'string' || !(LEVELS as readonly string[]).includes(level)) {
        throw new SuiteError(
          `${p}.level`,
          `must be one of ${LEVELS.join(', ')}, got ${JSON.stringify(level)}`,
        );
      }
      const task: Task = {
        id,
        level: level as Level,
        examples: examples(field(t, 'examples', p), `${p}.examples`),
        hidden: examples(field(t, 'hidden', p), `${p}.hidden`),
      };
      return { ...task, ...kindFields(t, p) };
    }),
  };
}

/** A task's optional `kind` and `tests`, checked: tests come with, and only with, the `tooluse` kind. */
function kindFields(t: Record<string, unknown>, p: string): Pick<Task, 'kind' | 'tests'> {
  if (!('kind' in t)) {
    if ('tests' in t) throw new SuiteError(`${p}.tests`, 'tests are for tasks of kind "tooluse"');
    return {};
  }
  const kind = TASK_KINDS.find((k) => k === t.kind);
  if (!kind)
    throw new SuiteError(
      `${p}.kind`,
      `must be one of ${TASK_KINDS.join(', ')}, got ${JSON.stringify(t.kind)}`,
    );
  if (kind === 'examples') {
    if ('tests' in t) throw new SuiteError(`${p}.tests`, 'tests are for tasks of kind "tooluse"');
    return { kind };
  }
  return { kind, tests: examples(field(t, 'tests', p), `${p}.tests`) };
}

/**
 * Reads a suite file's text. A bad file (invalid JSON, missing or mistyped fields, non-finite
 * numbers, duplicate ids, empty tests) is rejected as a whole, naming the first problem and its
 * JSON path; nothing of it is returned.
 */
export function parseSuite(text: string): SuiteParse {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, path: '$', message: `not valid JSON: ${(err as Error).message}` };
  }
  try {
    return { ok: true, suite: toSuite(value) };
  } catch (err) {
    if (err instanceof SuiteError) return { ok: false, path: err.path, message: err.message };
    throw err;
  }
}
