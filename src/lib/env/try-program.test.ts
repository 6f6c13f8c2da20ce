import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QuickJSSandbox } from '../sandbox/quickjs';
import { createNodeQuickJS } from '../sandbox/quickjs-node';
import type { Task } from './suite';
import { tryProgram } from './try-program';

const task: Task = {
  id: 'double',
  level: 'easy',
  examples: [
    { input: 1, output: 2 },
    { input: 2, output: 4 },
  ],
  hidden: [{ input: 0, output: 0 }],
};

let sandbox: QuickJSSandbox;
beforeAll(async () => {
  sandbox = await createNodeQuickJS();
});
afterAll(() => sandbox.dispose());

describe('trying a program on a task', () => {
  it('gives each test its output and whether it passed', async () => {
    const { rows, runError } = await tryProgram(sandbox, task, 'x+x');
    expect(runError).toBeNull();
    expect(rows.map((r) => [r.set, r.input, r.got, r.pass])).toEqual([
      ['example', 1, '2', true],
      ['example', 2, '4', true],
      ['hidden', 0, '0', true],
    ]);
  });

  it('says each failing call by itself, and that the whole run fails, so no test passes', async () => {
    // x/x is NaN at 0 only; the whole run failed on it, and every row showed that one error.
    const { rows, runError } = await tryProgram(sandbox, task, '2*x/x*x');
    expect(rows.map((r) => r.got)).toEqual(['2', '4', 'output: f(0) is NaN']);
    // An episode runs every test at once: it scores nothing, so no row passes.
    expect(rows.map((r) => r.pass)).toEqual([false, false, false]);
    expect(runError).toBe('output: f(0) is NaN');
  });

  it('says a syntax error with the code it was found in', async () => {
    const { rows, runError } = await tryProgram(sandbox, task, 'x*');
    expect(runError).toMatch(/^syntax: .* in \(x\) => \(x\*\)$/);
    // The sandbox's place is in the wrapper around the expression, so it is left out here.
    expect(runError).not.toMatch(/line \d+, column/);
    expect(rows).toHaveLength(3);
    for (const r of rows) {
      expect(r.pass).toBe(false);
      expect(r.got).toMatch(/^syntax: .* in \(x\) => \(x\*\)$/);
    }
  });

  it('says why an output that is not a number fails', async () => {
    const { rows, runError } = await tryProgram(sandbox, task, '"a"');
    expect(runError).toBe(`output: f(1) is "a", not a finite number: an episode's run fails whole on it`);
    expect(rows.map((r) => r.got)).toEqual(rows.map(() => '"a": not a number'));
    expect(rows.every((r) => !r.pass)).toBe(true);
  });

  it('passes no row when one output is not a number, as the episode whose run it fails', async () => {
    // Right at 1 and 2, a string at 0: an episode's run gets err:output and scores nothing.
    const { rows, runError } = await tryProgram(sandbox, task, 'x === 0 ? "zero" : 2*x');
    expect(rows.map((r) => r.got)).toEqual(['2', '4', '"zero": not a number']);
    expect(rows.map((r) => r.pass)).toEqual([false, false, false]);
    expect(runError).toMatch(/^output: f\(0\) is "zero", not a finite number/);
  });
});
