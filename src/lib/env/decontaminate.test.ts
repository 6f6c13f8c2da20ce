import { describe, expect, it } from 'vitest';
import { HeldOutIndex } from './decontaminate';
import type { Task } from './suite';

const task = (id: string, inputs: number[], f: (x: number) => number): Task => ({
  id,
  level: 'easy',
  examples: inputs.slice(0, 2).map((x) => ({ input: x, output: f(x) })),
  hidden: inputs.slice(2).map((x) => ({ input: x, output: f(x) })),
});

describe('HeldOutIndex', () => {
  const index = new HeldOutIndex([
    task('x-7', [1, 2, 0, 5], (x) => x - 7),
    task('2x@3', [3, 6, 9], (x) => 2 * x),
    task('far', [1, 99], (x) => x),
  ]);

  it("finds the held-out task a program computes at that task's own inputs", () => {
    expect(index.match((x) => x - 7)).toBe('x-7');
    expect(index.match((x) => x + x)).toBe('2x@3');
    // Equal at the shown inputs, not at the hidden ones: not the task.
    expect(index.match((x) => (x < 3 ? x - 7 : x))).toBeNull();
    expect(index.size).toBe(3);
  });

  it('skips tasks at inputs the program was not run at, and names tasks outside the probe inputs', () => {
    expect(index.match((x) => (x === 9 ? undefined : 2 * x))).toBeNull();
    expect(index.match((x) => (x === 0 ? null : x - 7))).toBeNull();
    expect(index.unchecked).toEqual(['far']);
  });
});
