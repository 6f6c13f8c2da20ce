import type { TurnRecord } from './episode';
import type { Task } from './suite';
import type { TestReport } from './test-report';

/**
 * What an episode's turns say about revising (DESIGN §3.1): each run that failed a test and was
 * followed by another turn is a chance to revise; the next program either fixes the task (passes
 * every test of its own turn), copies a number the report showed without fixing it, or neither.
 */
export interface RevisionCounts {
  /** Failed runs followed by another turn. */
  tries: number;
  /** Of those, the next program passed every test of its turn (its run's tests, or the hidden ones on submit). */
  fixes: number;
  /** Of those, the next program did not fix the task and every constant in it is a number of the report. */
  copies: number;
}

/** Whether a turn's program passed every test of that turn. */
function passedAll(turn: TurnRecord, task: Task): boolean {
  if (turn.action === 'submit') return turn.passed === task.hidden.length;
  return turn.report ? turn.report.passed === turn.report.total && !turn.report.error : false;
}

/** A run whose report showed a failing test (or an error). */
const failedRun = (turn: TurnRecord): boolean =>
  turn.action === 'run' && turn.report !== undefined && turn.report.passed < turn.report.total;

/** Every number a report shows: counts, and each failing test's input, expected output and output. */
export function reportNumbers(report: TestReport): Set<number> {
  const out = new Set([report.passed, report.total]);
  for (const f of report.failures) for (const y of [f.input, f.expected, f.output]) out.add(y);
  return out;
}

/** The integer constants a program writes (`x*3+12` → 3, 12). */
export const programConstants = (program: string): number[] => (program.match(/\d+/g) ?? []).map(Number);

/** Counts an episode's chances to revise, its fixes and its copies of report numbers. */
export function revisionCounts(turns: readonly TurnRecord[], task: Task): RevisionCounts {
  const out: RevisionCounts = { tries: 0, fixes: 0, copies: 0 };
  turns.forEach((turn, k) => {
    const next = turns[k + 1];
    if (!next || !failedRun(turn) || !turn.report) return;
    out.tries += 1;
    if (passedAll(next, task)) {
      out.fixes += 1;
      return;
    }
    const constants = programConstants(next.program);
    const shown = reportNumbers(turn.report);
    if (constants.length > 0 && constants.every((c) => shown.has(c))) out.copies += 1;
  });
  return out;
}
