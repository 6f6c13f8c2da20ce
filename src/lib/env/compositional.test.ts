import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QuickJSSandbox } from '../sandbox/quickjs';
import { createNodeQuickJS } from '../sandbox/quickjs-node';
import { COMPOSITIONAL_HELD_OUT } from './compositional';
import { HeldOutIndex, PROBE_INPUTS } from './decontaminate';
import { FAMILIES, PROCEDURAL_FAMILIES, type Family, type GeneratedTask } from './families';
import { parseSuite } from './suite';
import { builtInTasks, generalisationOf } from './task-kinds';
import { TOOLUSE_SHOWN, TOOLUSE_TESTS } from './tooluse';

/** The family and parameters of a generated task, from its id (`[tool:]family:params`). */
function parse(t: GeneratedTask): { f: Family; p: number[] } {
  const f = PROCEDURAL_FAMILIES.find((x) => x.name === t.family);
  if (!f) throw new Error(`no procedural family ${t.family}`);
  const p = (t.id.split(':').at(-1) ?? '').split(',').map(Number);
  return { f, p };
}

const parts = (t: GeneratedTask) => {
  const { f, p } = parse(t);
  return p.map((v, i) => `${t.level}:${f.roles?.[i] ?? '?'}=${v}`);
};

let sandbox: QuickJSSandbox;
beforeAll(async () => {
  sandbox = await createNodeQuickJS();
});
afterAll(() => sandbox.dispose());

describe('the compositional split', () => {
  for (const kind of ['examples', 'tooluse'] as const) {
    const tasks = builtInTasks(kind, 1, 'compositional');
    const training = tasks.filter((t) => !t.heldOut);
    const heldOut = tasks.filter((t) => t.heldOut);

    it(`${kind}: is deterministic for a seed and differs between seeds`, () => {
      expect(builtInTasks(kind, 1, 'compositional')).toEqual(tasks);
      const ids = (seed: number) =>
        builtInTasks(kind, seed, 'compositional')
          .filter((t) => t.heldOut)
          .map((t) => t.id)
          .sort();
      expect(ids(2)).not.toEqual(ids(1));
      expect(parseSuite(JSON.stringify({ name: 'c', tasks })).ok).toBe(true);
    });

    it(`${kind}: trains on far more functions than the families split, each family held out in part`, () => {
      const families = builtInTasks(kind, 1, 'families').filter((t) => !t.heldOut);
      expect(training.length).toBeGreaterThan(5 * families.length);
      for (const f of PROCEDURAL_FAMILIES) {
        const held = heldOut.filter((t) => t.family === f.name).length;
        expect(held, f.name).toBeLessThanOrEqual(COMPOSITIONAL_HELD_OUT);
      }
      for (const level of ['easy', 'medium', 'hard'] as const)
        expect(heldOut.filter((t) => t.level === level).length, level).toBeGreaterThanOrEqual(10);
    });

    it(`${kind}: holds out only new combinations of parts training uses in the same role at the level`, () => {
      const trained = new Set(training.flatMap(parts));
      for (const t of heldOut) for (const q of parts(t)) expect(trained.has(q), `${t.id}: ${q}`).toBe(true);
      // `a*x` is the only shape that scales at the easy level: none of it is held out.
      expect(heldOut.filter((t) => t.family === 'a*x')).toEqual([]);
    });

    it(`${kind}: trains on nothing that computes a held-out or generalisation task at its inputs`, () => {
      const index = new HeldOutIndex([...heldOut, ...generalisationOf(tasks)]);
      expect(index.unchecked).toEqual([]);
      const clashes = training.filter((t) => {
        const { f, p } = parse(t);
        return index.match((x) => (PROBE_INPUTS.includes(x) ? f.apply(p, x) : undefined)) !== null;
      });
      expect(clashes.map((t) => t.id)).toEqual([]);
      // `x%4+1` is a generalisation program outside the built-in families; the space makes it.
      expect(training.some((t) => t.program === 'x%4+1')).toBe(false);
      expect(tasks.length).toBeLessThan(PROCEDURAL_FAMILIES.reduce((n, f) => n + f.params.length, 0));
    });
  }

  it('keeps the families split of the built-in tasks unchanged by default', () => {
    expect(builtInTasks('examples', 1)).toEqual(builtInTasks('examples', 1, 'families'));
    expect(new Set(builtInTasks('examples', 1).map((t) => t.family))).toEqual(
      new Set(FAMILIES.map((f) => f.name)),
    );
  });

  it('tells every two tool-use functions apart by the shown example and the tests', () => {
    const tasks = builtInTasks('tooluse', 1, 'compositional');
    const seen = new Map<string, string>();
    for (const t of tasks) {
      const { f, p } = parse(t);
      const key = [...TOOLUSE_SHOWN, ...TOOLUSE_TESTS].map((x) => f.apply(p, x)).join(',');
      const all = PROBE_INPUTS.map((x) => f.apply(p, x)).join(',');
      const other = seen.get(key);
      expect(other === undefined || other === all, `${t.id} agrees with another task on its tests`).toBe(
        true,
      );
      seen.set(key, all);
    }
  });

  it('has target programs that compute their tasks in the sandbox', async () => {
    const tasks = builtInTasks('examples', 1, 'compositional');
    for (const t of tasks.filter((_, i) => i % 40 === 0)) {
      const tests = [...t.examples, ...t.hidden];
      const r = await sandbox.run({
        code: `const f = (x) => (${t.program})`,
        inputs: tests.map((e) => e.input),
      });
      expect(r.outputs, t.id).toEqual(tests.map((e) => e.output));
    }
  });
});
