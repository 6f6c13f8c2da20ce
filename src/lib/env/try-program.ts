import { shown } from '../errors';
import type { Sandbox, SandboxResult } from '../sandbox/types';
import { isAnswer, programCode } from './episode';
import type { Task } from './suite';

/** One test of a task, run with the user's program (the task editor's "try"). */
export interface TryRow {
  set: 'example' | 'hidden';
  input: number;
  expected: number;
  got: string;
  pass: boolean;
}

/**
 * The sandbox's message without its "(line L, column C)": that place is in the wrapper
 * `const f = (x) => (…);`, not in the one-line expression the user wrote.
 */
const unplaced = (message: string) => message.replace(/ \(line \d+, column \d+\)$/, '');
const failure = (r: SandboxResult) => `${r.error?.kind ?? 'error'}: ${unplaced(r.error?.message ?? '')}`;

/** What trying a program gives: a row per test, and the whole run's error when it failed. */
export interface TryResult {
  rows: TryRow[];
  /**
   * Run on every test at once, as an episode runs them, the program failed: then no test
   * passes (an episode scores nothing), and each row shows what its test gives run alone.
   */
  runError: string | null;
}

/**
 * Runs `(x) => (program)` on a task's examples and hidden tests, all in one run as an episode
 * does. One failing call fails the whole run: then each test runs alone, so that each row says
 * its own outcome (`x/x` fails at 0 only), and none passes. A syntax error is the same for every
 * test: it is said with the code it was found in, since the wrapper's closing bracket is often
 * what it names (`x*` gives "unexpected token ')'").
 */
export async function tryProgram(sandbox: Sandbox, task: Task, program: string): Promise<TryResult> {
  const code = programCode(program);
  const tests = [
    ...task.examples.map((e) => ({ ...e, set: 'example' as const })),
    ...task.hidden.map((e) => ({ ...e, set: 'hidden' as const })),
  ];
  const row = (t: (typeof tests)[number], r: SandboxResult, y: unknown, counts: boolean): TryRow => ({
    set: t.set,
    input: t.input,
    expected: t.output,
    // An episode's run fails on an output that is not a number (err:output): say why.
    got: !r.ok
      ? failure(r)
      : typeof y === 'number'
        ? JSON.stringify(y)
        : `${JSON.stringify(y)}: not a number`,
    pass: counts && r.ok && y === t.output,
  });
  const all = await sandbox.run({ code, inputs: tests.map((t) => t.input) });
  if (all.ok) {
    // An episode's run fails whole when any output is not a finite number (err:output), so
    // one such output leaves every row unpassed, as a failing call does.
    const bad = tests.findIndex((_, i) => !isAnswer(all.outputs?.[i]));
    const badTest = tests[bad];
    const runError = badTest
      ? `output: f(${badTest.input}) is ${shown(all.outputs?.[bad])}, not a finite number: an episode's run fails whole on it`
      : null;
    return { rows: tests.map((t, i) => row(t, all, all.outputs?.[i], bad < 0)), runError };
  }
  if (all.error?.kind === 'syntax') {
    const message = `${unplaced(all.error.message)} in (x) => (${program})`;
    const said = { ...all, error: { kind: 'syntax' as const, message } };
    return { rows: tests.map((t) => row(t, said, undefined, false)), runError: failure(said) };
  }
  const rows: TryRow[] = [];
  for (const t of tests) {
    const alone = await sandbox.run({ code, inputs: [t.input] });
    rows.push(row(t, alone, alone.outputs?.[0], false));
  }
  return { rows, runError: failure(all) };
}
