import { describe, expect, it } from 'vitest';
import { HeldOutIndex, PROBE_INPUTS } from './decontaminate';
import { FAMILIES, generateTasks, VISIBLE_INPUTS } from './families';
import { generalisationTasks, OUTSIDE_FAMILIES, OUTSIDE_FAMILY } from './generalisation';
import { parseSuite } from './suite';
import { sourceToTokens } from './tokenizer';
import { START, advance } from './grammar';
import type { ProgramToken } from './vocab';

describe('the generalisation suite', () => {
  const suite = generateTasks(1);
  const general = generalisationTasks(suite);

  it('is deterministic, held out, and a valid suite of distinct ids', () => {
    expect(generalisationTasks(generateTasks(1))).toEqual(general);
    expect(general.every((t) => t.heldOut && t.generalisation)).toBe(true);
    const parsed = parseSuite(JSON.stringify({ name: 'g', tasks: [...suite, ...general] }));
    expect(parsed.ok).toBe(true);
  });

  it('shows each held-out task of the trained families at other inputs than 1, 2, 4', () => {
    const shifted = general.filter((t) => t.family !== OUTSIDE_FAMILY);
    // Every held-out task but those a training task equals at the shifted inputs.
    expect(shifted.length).toBeGreaterThan(0.9 * suite.filter((t) => t.heldOut).length);
    for (const t of shifted) {
      expect(t.examples.map((e) => e.input).some((x) => VISIBLE_INPUTS.includes(x))).toBe(false);
      const family = FAMILIES.find((f) => f.name === t.family);
      expect(family).toBeDefined();
    }
    const x3 = shifted.find((t) => t.program === 'x-3');
    if (x3) expect(x3.examples).toEqual([3, 6, 8].map((x) => ({ input: x, output: x - 3 })));
  });

  it('holds programs within the grammar that no training family makes', () => {
    const outside = general.filter((t) => t.family === OUTSIDE_FAMILY);
    expect(outside.map((t) => t.program)).toEqual(OUTSIDE_FAMILIES.map((p) => p.program));
    const families = new HeldOutIndex(generateTasks(1));
    for (const p of OUTSIDE_FAMILIES) {
      let s: ReturnType<typeof advance> = START;
      for (const tok of sourceToTokens(p.program)) s = s && advance(s, tok as ProgramToken);
      expect(s?.expectOperand, p.program).toBe(false);
      // No family task (of any split) computes it at the probe inputs.
      expect(
        families.match((x) => p.apply(x)),
        p.program,
      ).toBeNull();
    }
  });

  it('is never among the training tasks, and every input is one decontamination probes', () => {
    const index = new HeldOutIndex(general);
    expect(index.unchecked).toEqual([]);
    for (const t of suite.filter((u) => !u.heldOut)) {
      const table = new Map([...t.examples, ...t.hidden].map((e) => [e.input, e.output]));
      // The training task's function at every input, from its family.
      const fam = FAMILIES.find((f) => f.name === t.family);
      const p = fam?.params.find((q) => `${fam.name}:${q.join(',')}` === t.id);
      expect(p).toBeDefined();
      const at = (x: number) => table.get(x) ?? (fam && p ? fam.apply(p, x) : null);
      expect(index.match(at), t.id).toBeNull();
    }
    expect(
      general.flatMap((t) => [...t.examples, ...t.hidden]).every((e) => PROBE_INPUTS.includes(e.input)),
    ).toBe(true);
  });
});
