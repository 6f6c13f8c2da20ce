import { describe, expect, it } from 'vitest';
import { HeldOutIndex } from './decontaminate';
import { FAMILIES, generateTasks, HELD_OUT_FRACTION, type GeneratedTask } from './families';
import { OUTSIDE_FAMILIES } from './generalisation';
import { kindOf, parseSuite } from './suite';
import {
  generateToolUseTasks,
  toolUseGeneralisationTasks,
  toolUseSuites,
  TOOLUSE_HIDDEN,
  TOOLUSE_SHOWN,
  TOOLUSE_TESTS,
  withHint,
} from './tooluse';

/** A task's outputs at every input it has: shown, tests, hidden (its function there). */
const signature = (t: GeneratedTask) =>
  [...t.examples, ...(t.tests ?? []), ...t.hidden]
    .sort((a, b) => a.input - b.input)
    .map((e) => `${e.input}:${e.output}`)
    .join(',');

describe('tool-use tasks', () => {
  const tasks = generateToolUseTasks(1);

  it('are the same, split the same, for the same seed; another seed splits otherwise', () => {
    expect(generateToolUseTasks(1)).toEqual(tasks);
    const held = (ts: GeneratedTask[]) =>
      ts
        .filter((t) => t.heldOut)
        .map((t) => t.id)
        .sort();
    expect(held(generateToolUseTasks(2))).not.toEqual(held(tasks));
  });

  it('are one per family member, of kind tooluse, showing one example and running the tests', () => {
    expect(tasks).toHaveLength(FAMILIES.reduce((n, f) => n + f.params.length, 0));
    for (const t of tasks) {
      expect(t.id.startsWith('tool:')).toBe(true);
      expect(kindOf(t)).toBe('tooluse');
      expect(t.examples.map((e) => e.input)).toEqual(TOOLUSE_SHOWN);
      expect(t.tests?.map((e) => e.input)).toEqual(TOOLUSE_TESTS);
      expect(t.hidden.map((e) => e.input)).toEqual(TOOLUSE_HIDDEN);
    }
    expect(tasks.find((t) => t.id === 'tool:a*x:3')).toMatchObject({
      program: '3*x',
      examples: [{ input: 1, output: 3 }],
    });
    // The examples kind is left as it was: no kind, no tests.
    expect(generateTasks(1).every((t) => t.kind === undefined && t.tests === undefined)).toBe(true);
  });

  it('holds out a quarter of each family, and no held-out function is computed by another task', () => {
    for (const f of FAMILIES) {
      const mine = tasks.filter((t) => t.family === f.name);
      const held = mine.filter((t) => t.heldOut).length;
      expect(held).toBe(Math.max(1, Math.ceil(mine.length * HELD_OUT_FRACTION)));
    }
    const count = new Map<string, number>();
    for (const t of tasks) count.set(signature(t), (count.get(signature(t)) ?? 0) + 1);
    const trained = new Set(tasks.filter((t) => !t.heldOut).map(signature));
    for (const t of tasks.filter((t) => t.heldOut)) {
      expect(trained.has(signature(t)), t.id).toBe(false);
      expect(count.get(signature(t)), t.id).toBe(1);
    }
  });

  it('show too little to write the program, while the tests tell every two functions apart', () => {
    // The one example fits many programs: on average 9 distinct functions of the families.
    const byShown = new Map<string, Set<string>>();
    for (const t of tasks) {
      const key = JSON.stringify(t.examples);
      byShown.set(key, (byShown.get(key) ?? new Set()).add(signature(t)));
    }
    const mean =
      tasks.reduce((s, t) => s + (byShown.get(JSON.stringify(t.examples))?.size ?? 0), 0) / tasks.length;
    expect(mean).toBeGreaterThan(5);
    // Two tasks that agree on the example and the tests agree on the hidden tests too.
    const byRun = new Map<string, string>();
    for (const t of tasks) {
      const key = JSON.stringify([t.examples, t.tests]);
      expect(byRun.get(key) ?? signature(t), t.id).toBe(signature(t));
      byRun.set(key, signature(t));
    }
  });

  it('make suites of training and held-out tasks that read back as tool-use tasks', () => {
    const { train, heldOut } = toolUseSuites(1);
    expect(train.tasks.length + heldOut.tasks.length).toBe(tasks.length);
    expect(heldOut.tasks.map((t) => t.id).sort()).toEqual(
      tasks
        .filter((t) => t.heldOut)
        .map((t) => t.id)
        .sort(),
    );
    expect(heldOut.tasks[0]).not.toHaveProperty('family');
    const parsed = parseSuite(JSON.stringify(heldOut));
    expect(parsed).toEqual({ ok: true, suite: heldOut });
  });

  it('generalise to another shown input and to programs outside the families, all held out', () => {
    const general = toolUseGeneralisationTasks(tasks);
    const held = tasks.filter((t) => t.heldOut);
    expect(general).toHaveLength(held.length + OUTSIDE_FAMILIES.length);
    expect(new Set(general.map((t) => t.id)).size).toBe(general.length);
    const trained = new Set(tasks.filter((t) => !t.heldOut).map(signature));
    for (const t of general) {
      expect(t).toMatchObject({ heldOut: true, generalisation: true, kind: 'tooluse' });
      expect(trained.has(signature(t)), t.id).toBe(false);
      expect(t.examples).toHaveLength(1);
    }
    const shifted = general.find((t) => t.id === `${held[0]?.id}@6`);
    expect(shifted?.examples[0]?.input).toBe(6);
    expect(shifted?.tests?.map((e) => e.input)).toContain(1);
    expect(general.find((t) => t.id === 'tool:outside:9-x')?.tests?.[0]).toEqual({ input: 0, output: 9 });
  });

  it('are decontaminated on their tests as on their examples and hidden tests', () => {
    const index = new HeldOutIndex(tasks.filter((t) => t.heldOut));
    expect(index.unchecked).toEqual([]);
    const t = tasks.find((x) => x.heldOut);
    if (!t) throw new Error('no held-out task');
    const value = new Map([...t.examples, ...(t.tests ?? []), ...t.hidden].map((e) => [e.input, e.output]));
    expect(index.match((x) => value.get(x))).toBe(t.id);
    // Right on the example and hidden tests, wrong on one test: not that task.
    const test = t.tests?.[0];
    if (!test) throw new Error('no test');
    expect(index.match((x) => (x === test.input ? test.output + 1 : value.get(x)))).not.toBe(t.id);
  });
});

describe('task kinds in suite files', () => {
  const task = {
    id: 'a',
    level: 'easy',
    examples: [{ input: 1, output: 3 }],
    hidden: [{ input: 2, output: 5 }],
  };
  const suite = (t: Record<string, unknown>) => JSON.stringify({ name: 's', tasks: [t] });

  it('reads a tool-use task with its tests, and an explicit examples kind', () => {
    const tests = [{ input: 0, output: 2 }];
    expect(parseSuite(suite({ ...task, kind: 'tooluse', tests }))).toEqual({
      ok: true,
      suite: { name: 's', tasks: [{ ...task, kind: 'tooluse', tests }] },
    });
    expect(parseSuite(suite({ ...task, kind: 'examples' }))).toMatchObject({ ok: true });
  });

  it.each([
    ['an unknown kind', { ...task, kind: 'quiz' }, '$.tasks[0].kind', /must be one of examples, tooluse/],
    [
      'a tool-use task without tests',
      { ...task, kind: 'tooluse' },
      '$.tasks[0].tests',
      /missing field "tests"/,
    ],
    [
      'tests without a kind',
      { ...task, tests: [{ input: 0, output: 2 }] },
      '$.tasks[0].tests',
      /kind "tooluse"/,
    ],
    ['empty tests', { ...task, kind: 'tooluse', tests: [] }, '$.tasks[0].tests', /must not be empty/],
  ])('rejects %s, naming the path', (_name, t, path, message) => {
    const r = parseSuite(suite(t));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.path).toBe(path);
    expect(r.message).toMatch(message);
  });
});

describe('a hint for a tool-use task', () => {
  it('shows the first test not shown yet as a second example, and leaves the tests', () => {
    const t = generateToolUseTasks(1)[0];
    if (!t) throw new Error('no task');
    const h = withHint(t);
    expect(h.examples).toEqual([...t.examples, t.tests?.[0]]);
    expect(h.tests).toEqual(t.tests);
    expect(withHint(h).examples.map((e) => e.input)).toEqual([1, 0, 2]);
    expect(withHint({ ...t, tests: [] })).toEqual({ ...t, tests: [] });
  });
});
