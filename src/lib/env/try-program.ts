import type { Sandbox, SandboxResult } from '../sandbox/types';
import { programCode } from './episode';
import type { Task } from './suite';

/** One test of a task, run with the user's program (the task editor's "try"). */
export interface TryRow {
  set: 'example' | 'hidden';
  input: number;
  expected: number;
  got: string;
  pass: boolean;
}

const failure = (r: SandboxResult) => `${r.error?.kind ?? 'error'}: ${r.error?.message ?? ''}`;

/**
 * Runs `(x) => (program)` on a task's examples and hidden tests. One failing call fails a whole
 * run, so when the run fails each test runs alone and each row says its own outcome (`x/x` fails
 * at 0 alone). A syntax error is the same for every test: it is said with the code it was found
 * in, since the wrapper's closing bracket is often what it names (`x*` gives "unexpected token
 * ')'").
 */
export async function tryProgram(sandbox: Sandbox, task: Task, program: string): Promise<TryRow[]> {
  const code = programCode(program);
  const tests = [
    ...task.examples.map((e) => ({ ...e, set: 'example' as const })),
    ...task.hidden.map((e) => ({ ...e, set: 'hidden' as const })),
  ];
  const row = (t: (typeof tests)[number], r: SandboxResult, y: unknown): TryRow => ({
    set: t.set,
    input: t.input,
    expected: t.output,
    got: r.ok ? JSON.stringify(y) : failure(r),
    pass: r.ok && y === t.output,
  });
  const all = await sandbox.run({ code, inputs: tests.map((t) => t.input) });
  if (all.ok) return tests.map((t, i) => row(t, all, all.outputs?.[i]));
  if (all.error?.kind === 'syntax') {
    const said = {
      ...all,
      error: { kind: 'syntax' as const, message: `${all.error.message} in (x) => (${program})` },
    };
    return tests.map((t) => row(t, said, undefined));
  }
  const rows: TryRow[] = [];
  for (const t of tests) {
    const alone = await sandbox.run({ code, inputs: [t.input] });
    rows.push(row(t, alone, alone.outputs?.[0]));
  }
  return rows;
}
