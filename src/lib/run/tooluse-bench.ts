/**
 * The `tooluse` bench's suite file (`--tasks FILE`): its tool-use tasks, read and checked before any
 * training, played greedily by each arm's newest version; and the figures it reports for them.
 */
import type { EvalRow, EvalTask } from '../env/evaluate';
import { kindOf, parseSuite, type Example, type Task } from '../env/suite';
import { band } from './sweep-summary';

/** Mean and sample standard deviation of the figures that are there (null when none is). */
export interface MeanSd {
  mean: number | null;
  sd: number | null;
  n: number;
}

export function meanSd(xs: readonly (number | null)[]): MeanSd {
  const v = xs.filter((x): x is number => x !== null);
  return v.length ? { ...band(v), n: v.length } : { mean: null, sd: null, n: 0 };
}

/** A suite file's tool-use tasks as the bench plays them. */
export interface ToolUseFile {
  /** The path given. */
  file: string;
  /** The suite's own name. */
  name: string;
  /** Its tool-use tasks, every one held out (reported in the held-out split). */
  tasks: EvalTask[];
  /** Tasks of the file of another kind, left out. */
  skipped: number;
  /** Of `tasks`, those equal to a training task of the arms: file task id → training task id. */
  equalTraining: Record<string, string>;
}

/** A task's examples, tests and hidden tests in input order: two tasks with one key are one task. */
function taskKey(t: Task): string {
  const sorted = (xs: readonly Example[] = []) =>
    [...xs].sort((a, b) => a.input - b.input).map((e) => [e.input, e.output]);
  return JSON.stringify([sorted(t.examples), sorted(t.tests), sorted(t.hidden)]);
}

/**
 * Reads and checks a suite file of tool-use tasks (`read` gives its text): throws, naming the file
 * and the reason, when it cannot be read, does not parse as a suite, or holds no tool-use task.
 * A task that shows, tests and hides what a task of `training` does (ids and levels aside) is
 * kept and listed in `equalTraining`.
 */
export function readToolUseFile(
  file: string,
  read: (file: string) => string,
  training: readonly Task[],
): ToolUseFile {
  let text: string;
  try {
    text = read(file);
  } catch (err) {
    throw new Error(`--tasks ${file}: cannot be read (${err instanceof Error ? err.message : String(err)})`, {
      cause: err,
    });
  }
  const parsed = parseSuite(text);
  if (!parsed.ok) throw new Error(`--tasks ${file}: not a task suite: ${parsed.path}: ${parsed.message}`);
  const tools = parsed.suite.tasks.filter((t) => kindOf(t) === 'tooluse');
  if (tools.length === 0)
    throw new Error(
      `--tasks ${file}: holds no tool-use task (${parsed.suite.tasks.length} tasks, none of kind "tooluse")`,
    );
  const trainingByKey = new Map(training.map((t) => [taskKey(t), t.id]));
  const equalTraining: Record<string, string> = {};
  for (const t of tools) {
    const id = trainingByKey.get(taskKey(t));
    if (id !== undefined) equalTraining[t.id] = id;
  }
  return {
    file,
    name: parsed.suite.name,
    tasks: tools.map((t) => ({ ...t, heldOut: true })),
    skipped: parsed.suite.tasks.length - tools.length,
    equalTraining,
  };
}

/** Greedy play of one arm's newest version on the file's tasks. */
export interface FileFigures {
  success: number | null;
  /** Of the failed runs followed by another turn, the share fixed next / only copied from the report. */
  reviseRate: number | null;
  copyRate: number | null;
  /** Share of episodes where the policy chose a `<run>` (an automatic first run left out). */
  runFraction: number | null;
  solvedWithRun: number | null;
  meanTurns: number | null;
  /** The same policy made to submit at its first turn. */
  successForcedOneTurn: number | null;
}

/** The figures of `agent`'s greedy held-out row (every file task is held out); nulls when it has none. */
export function fileFigures(rows: readonly EvalRow[], agent = 'policy'): FileFigures {
  const r = rows.find(
    (x) => x.agent === agent && x.mode === 'greedy' && x.split === 'heldOut' && x.level === 'all',
  );
  return {
    success: r?.success ?? null,
    reviseRate: r?.toolUse?.reviseRate ?? null,
    copyRate: r?.toolUse?.copyRate ?? null,
    runFraction: r?.toolUse?.runFraction ?? null,
    solvedWithRun: r?.toolUse?.solvedWithRun ?? null,
    meanTurns: r?.meanTurns ?? null,
    successForcedOneTurn: r?.toolUse?.successOneTurn ?? null,
  };
}

/** One seed's file figures per arm. */
export interface FileRow {
  multiTurn: FileFigures;
  fromScratch: FileFigures;
  oneTurn: FileFigures;
}

/**
 * The bench keys of the file's figures over seeds (mean ± sd), named as the built-in held-out keys
 * under `tooluse.file.`: the base arm's turn budget against the one-turn arm, and the base arm's
 * tool use; the from-scratch arm under `tooluse.file.fromScratch`.
 */
export function fileSummary(f: ToolUseFile, rows: readonly FileRow[]): Record<string, unknown> {
  const of = (arm: keyof FileRow, key: keyof FileFigures) => meanSd(rows.map((r) => r[arm][key]));
  const gain = rows.map((r) =>
    r.multiTurn.success === null || r.oneTurn.success === null
      ? null
      : r.multiTurn.success - r.oneTurn.success,
  );
  return {
    'tooluse.file': f.file,
    'tooluse.file.name': f.name,
    'tooluse.file.tasks': f.tasks.length,
    'tooluse.file.skipped': f.skipped,
    'tooluse.file.equalTraining': Object.keys(f.equalTraining).length,
    'tooluse.file.equalTrainingIds': f.equalTraining,
    'tooluse.file.successMultiTurn': of('multiTurn', 'success'),
    'tooluse.file.successOneTurn': of('oneTurn', 'success'),
    'tooluse.file.gain': meanSd(gain),
    'tooluse.file.reviseRate': of('multiTurn', 'reviseRate'),
    'tooluse.file.copyRate': of('multiTurn', 'copyRate'),
    'tooluse.file.runFraction': of('multiTurn', 'runFraction'),
    'tooluse.file.solvedWithRun': of('multiTurn', 'solvedWithRun'),
    'tooluse.file.meanTurns': of('multiTurn', 'meanTurns'),
    'tooluse.file.successForcedOneTurn': of('multiTurn', 'successForcedOneTurn'),
    'tooluse.file.fromScratch': {
      success: of('fromScratch', 'success'),
      reviseRate: of('fromScratch', 'reviseRate'),
      copyRate: of('fromScratch', 'copyRate'),
      runFraction: of('fromScratch', 'runFraction'),
    },
  };
}
