import { describe, expect, it } from 'vitest';
import { taskName, taskNameNote } from './task-name';

describe('taskName', () => {
  it("a suite's task goes by its id, with no note", () => {
    expect(taskName('tool:linear:2*x+1')).toBe('tool:linear:2*x+1');
    expect(taskNameNote('tool:linear:2*x+1')).toBeUndefined();
  });

  it('a relabelled task is named by its outputs at its inputs, in ascending order, four then an ellipsis', () => {
    // A tool-use task relabelled with x*8: shown at 1, tested at 0, 2, 3, hidden at 9.
    const task = {
      examples: [{ input: 1, output: 8 }],
      tests: [0, 2, 3].map((x) => ({ input: x, output: 8 * x })),
      hidden: [{ input: 9, output: 72 }],
    };
    const id = 'hindsight:8,0,16,24,72';
    expect(taskName(id, task)).toBe('relabelled goal: f(0) = 0, f(1) = 8, f(2) = 16, f(3) = 24, …');
    expect(taskName(id, { ...task, tests: [], hidden: [] })).toBe('relabelled goal: f(1) = 8');
    expect(taskNameNote(id)).toMatch(/outputs an earlier program gave.*Internal id: hindsight:8,0,16,24,72$/);
  });

  it('without the task, a relabelled task is named by the outputs its id lists', () => {
    expect(taskName('hindsight:8,0,16,24,72')).toBe('relabelled goal: outputs 8, 0, 16, 24, …');
    expect(taskName('hindsight:-3,5')).toBe('relabelled goal: outputs -3, 5');
    expect(taskName('hindsight:')).toBe('relabelled goal');
  });
});
