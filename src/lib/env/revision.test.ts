import { describe, expect, it } from 'vitest';
import type { TurnRecord } from './episode';
import { programConstants, revisionCounts } from './revision';
import type { Task } from './suite';
import type { TestReport } from './test-report';

const task: Task = {
  id: 'tool:x+3',
  level: 'easy',
  kind: 'tooluse',
  examples: [{ input: 1, output: 4 }],
  tests: [0, 2].map((x) => ({ input: x, output: x + 3 })),
  hidden: [9, 10].map((x) => ({ input: x, output: x + 3 })),
};

/** A run of `program` whose report passed `passed` of 2, showing f(0) = 3 got `got`. */
const run = (program: string, passed: number, got = 0): TurnRecord => {
  const report: TestReport = {
    passed,
    total: 2,
    failures: passed < 2 ? [{ input: 0, expected: 3, output: got }] : [],
  };
  return { action: 'run', program, reward: 0, report, testsPassed: passed };
};
const submit = (program: string, passed: number): TurnRecord => ({
  action: 'submit',
  program,
  reward: 0,
  passed,
});

describe('revision counts', () => {
  it('counts a failed run followed by a right program as a fixed revision', () => {
    expect(revisionCounts([run('x', 0), submit('x+3', 2)], task)).toEqual({ tries: 1, fixes: 1, copies: 0 });
    expect(revisionCounts([run('x', 0), run('x+3', 2), submit('x+3', 2)], task)).toEqual({
      tries: 1,
      fixes: 1,
      copies: 0,
    });
  });

  it('counts a wrong next program made of report numbers as a copy, not a fix', () => {
    expect(revisionCounts([run('x', 0), submit('3', 0)], task)).toEqual({ tries: 1, fixes: 0, copies: 1 });
    // 7 is not in the report: a wrong revision, not a copy.
    expect(revisionCounts([run('x', 0), submit('x+7', 0)], task)).toEqual({ tries: 1, fixes: 0, copies: 0 });
  });

  it('has no chance to revise after a passing run, on a first-turn submit, or when the run was the last turn', () => {
    expect(revisionCounts([run('x+3', 2), submit('x+3', 2)], task)).toEqual({
      tries: 0,
      fixes: 0,
      copies: 0,
    });
    expect(revisionCounts([submit('x+3', 2)], task)).toEqual({ tries: 0, fixes: 0, copies: 0 });
    expect(revisionCounts([run('x', 0)], task)).toEqual({ tries: 0, fixes: 0, copies: 0 });
  });

  it('reads each failed run of an episode as its own chance', () => {
    const turns = [run('x', 0), run('x+1', 0, 1), submit('x+3', 2)];
    expect(revisionCounts(turns, task)).toEqual({ tries: 2, fixes: 1, copies: 0 });
  });

  it('finds a program’s constants', () => {
    expect(programConstants('x*3+12')).toEqual([3, 12]);
    expect(programConstants('x*x')).toEqual([]);
  });
});
