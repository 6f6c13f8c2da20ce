import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QuickJSSandbox } from '../sandbox/quickjs';
import { createNodeQuickJS } from '../sandbox/quickjs-node';
import { FAMILIES, builtInSuites, generateTasks } from './families';
import { parseSuite } from './suite';

let sandbox: QuickJSSandbox;
beforeAll(async () => {
  sandbox = await createNodeQuickJS();
});
afterAll(() => sandbox.dispose());

describe('task families', () => {
  it('generate the same tasks and the same split for the same seed', () => {
    expect(generateTasks(7)).toEqual(generateTasks(7));
    const split = (seed: number) =>
      generateTasks(seed)
        .filter((t) => t.heldOut)
        .map((t) => t.id)
        .sort();
    expect(split(7)).not.toEqual(split(8));
  });

  it('hold out at least 20% of every family, and never train on a held-out task', () => {
    const tasks = generateTasks(3);
    for (const f of FAMILIES) {
      const mine = tasks.filter((t) => t.family === f.name);
      const held = mine.filter((t) => t.heldOut).length;
      expect(held / mine.length, f.name).toBeGreaterThanOrEqual(0.2);
      expect(held, f.name).toBeLessThan(mine.length);
    }
    const { train, heldOut } = builtInSuites(3);
    const trainIds = new Set(train.tasks.map((t) => t.id));
    expect(heldOut.tasks.some((t) => trainIds.has(t.id))).toBe(false);
    expect(train.tasks.length + heldOut.tasks.length).toBe(tasks.length);
  });

  it('hold out no task that computes what a training task computes (another family’s, on the same inputs)', () => {
    for (const seed of [1, 2, 3]) {
      const tasks = generateTasks(seed);
      const outputs = (t: (typeof tasks)[number]) =>
        [...t.examples, ...t.hidden].map((e) => e.output).join(',');
      const trained = new Set(tasks.filter((t) => !t.heldOut).map(outputs));
      expect(tasks.filter((t) => t.heldOut && trained.has(outputs(t))).map((t) => t.id)).toEqual([]);
    }
    // `(x+1)*2` is `2*x+2`: neither is held out.
    const both = generateTasks(1).filter((t) => t.id === '(x+a)*b:1,2' || t.id === 'a*x+b:2,2');
    expect(both.map((t) => t.heldOut)).toEqual([false, false]);
  });

  it('produce suites that pass the suite-file validator', () => {
    const { train, heldOut } = builtInSuites(1);
    expect(parseSuite(JSON.stringify(train)).ok).toBe(true);
    expect(parseSuite(JSON.stringify(heldOut)).ok).toBe(true);
  });

  it("have target programs that really compute their tasks' outputs in the sandbox", async () => {
    for (const t of generateTasks(1)) {
      const tests = [...t.examples, ...t.hidden];
      const r = await sandbox.run({
        code: `const f = (x) => (${t.program})`,
        inputs: tests.map((e) => e.input),
      });
      expect(r.outputs, t.id).toEqual(tests.map((e) => e.output));
    }
  });
});
