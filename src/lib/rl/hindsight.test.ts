import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ENV_CONFIG, TOOLUSE_ENV_CONFIG } from '../env/config';
import { HeldOutIndex, PROBE_INPUTS } from '../env/decontaminate';
import { generateTasks, type GeneratedTask } from '../env/families';
import { generalisationTasks } from '../env/generalisation';
import type { Task } from '../env/suite';
import { observationTokens, renderTokens } from '../env/tokenizer';
import { SUBMIT, tokenId, tokenText, VOCAB_SIZE } from '../env/vocab';
import type { QuickJSSandbox } from '../sandbox/quickjs';
import { createNodeQuickJS } from '../sandbox/quickjs-node';
import {
  HindsightPool,
  isRelabelledTask,
  relabel,
  mutateProgram,
  relabelEpisode,
  validateHindsight,
  DEFAULT_HINDSIGHT,
  type Relabelled,
} from './hindsight';
import { Rng } from '../random';

let sandbox: QuickJSSandbox;
beforeAll(async () => {
  sandbox = await createNodeQuickJS();
});
afterAll(() => sandbox.dispose());

/** The task x + 5 on inputs 1, 2 (shown) and 3, 7 (hidden). */
const TASK: Task = {
  id: 'x+5',
  level: 'easy',
  examples: [
    { input: 1, output: 6 },
    { input: 2, output: 7 },
  ],
  hidden: [
    { input: 3, output: 8 },
    { input: 7, output: 12 },
  ],
};

describe('relabel', () => {
  it('turns a wrong program into a solved episode of the task its outputs make', async () => {
    const r = await relabel('2*x', TASK, sandbox, DEFAULT_ENV_CONFIG, 100);
    expect(r).not.toBeNull();
    const { trajectory: t, key, length, task } = r as Relabelled;
    expect(length).toBe(3);
    // The relabelled task: the same inputs, the program's outputs; a task of its own id.
    expect(task.id).toBe('hindsight:2,4,6,14');
    expect(isRelabelledTask(task.id)).toBe(true);
    expect(isRelabelledTask(TASK.id)).toBe(false);
    expect(task.examples.map((e) => [e.input, e.output])).toEqual([
      [1, 2],
      [2, 4],
    ]);
    expect(task.hidden.map((e) => e.output)).toEqual([6, 14]);
    expect(t.solved).toBe(true);
    expect(t.turns).toBe(1);
    expect(key).toBe('easy:hindsight:2,4,6,14');
    // The observation shows the program's own outputs on the task's inputs.
    const prompt = observationTokens([
      { input: 1, output: 2 },
      { input: 2, output: 4 },
    ]);
    expect(t.tokens.slice(0, prompt.length)).toEqual(prompt);
    expect(t.tokens.slice(prompt.length)).toEqual([tokenId('2'), tokenId('*'), tokenId('x'), SUBMIT]);
    // Policy tokens carry a NaN behaviour log-prob (π_prox stands in) and the mask they are legal under.
    const owned = t.owned.flatMap((o, i) => (o ? [i] : []));
    expect(owned).toHaveLength(4);
    for (const i of owned) {
      expect(t.logProbs[i]).toBeNaN();
      const token = t.tokens[i] as number;
      expect(t.legal[i * VOCAB_SIZE + token]).toBe(1);
    }
    expect(t.logProbs[0]).toBe(0);
    expect(t.versions.every((v) => v === -1)).toBe(true);
    expect(t.return).toBeGreaterThan(1); // pass, closeness and ran-ok, less one turn's cost
  });

  it('gives programs that compute the same outputs the same key', async () => {
    const a = await relabel('x+x', TASK, sandbox, DEFAULT_ENV_CONFIG, 100);
    const b = await relabel('2*x', TASK, sandbox, DEFAULT_ENV_CONFIG, 100);
    expect(a?.key).toBe(b?.key);
  });

  it('refuses programs that fail, or whose outputs are not integers within the bound', async () => {
    expect(await relabel('x%0', TASK, sandbox, DEFAULT_ENV_CONFIG, 100)).toBeNull(); // NaN
    expect(await relabel('x*50', TASK, sandbox, DEFAULT_ENV_CONFIG, 100)).toBeNull(); // 350 > 100
    expect(await relabel('x*50', TASK, sandbox, DEFAULT_ENV_CONFIG, 1000)).not.toBeNull();
    expect(await relabel('x<2', TASK, sandbox, DEFAULT_ENV_CONFIG, 100)).toBeNull(); // booleans
  });

  it('relabels each distinct program of an episode once', async () => {
    const rs = await relabelEpisode(['x', 'x', 'x%0', 'x+5'], TASK, sandbox, DEFAULT_ENV_CONFIG, 100);
    expect(rs.map((r) => r.key)).toEqual(['easy:hindsight:1,2,3,7', 'easy:hindsight:6,7,8,12']);
  });

  it('relabels one-token variants of each program beside it when asked', async () => {
    const rs = await relabelEpisode(['x+5', 'x'], TASK, sandbox, DEFAULT_ENV_CONFIG, 100, 3, new Rng(7));
    const keys = rs.map((r) => r.key);
    // The programs written first, then variants of `x+5` (`x` has nothing to change).
    expect(keys.slice(0, 2)).toEqual(['easy:hindsight:6,7,8,12', 'easy:hindsight:1,2,3,7']);
    expect(keys.length).toBeGreaterThan(2);
    expect(keys.length).toBeLessThanOrEqual(5);
    expect(new Set(keys).size).toBe(keys.length);
    for (const r of rs.slice(2)) {
      // Each is x∘b for another operator or constant, relabelled as solved.
      const program = r.trajectory.tokens
        .filter((_, i) => r.trajectory.owned[i])
        .slice(0, -1)
        .map(tokenText)
        .join('');
      expect(program).toMatch(/^x[-+*%][0-9]$/);
      expect(program).not.toBe('x+5');
      expect(r.trajectory.solved).toBe(true);
    }
    // No rng, or 0 variants: the programs written alone.
    expect(await relabelEpisode(['x+5'], TASK, sandbox, DEFAULT_ENV_CONFIG, 100, 3)).toHaveLength(1);
    expect(await relabelEpisode(['x+5'], TASK, sandbox, DEFAULT_ENV_CONFIG, 100, 0, new Rng(7))).toHaveLength(
      1,
    );
  });
});

describe('relabelling a tool-use episode whole', () => {
  /** `3*x` shown at 1, tested at 0, 2, 4, hidden at 5, 10. */
  const tool: Task = {
    id: 'tool:3x',
    level: 'easy',
    kind: 'tooluse',
    examples: [{ input: 1, output: 3 }],
    tests: [0, 2, 4].map((x) => ({ input: x, output: 3 * x })),
    hidden: [5, 10].map((x) => ({ input: x, output: 3 * x })),
  };
  const env = { ...TOOLUSE_ENV_CONFIG, limits: { deadlineMs: 2000 } };

  it('makes each program a goal after the runs before it, their reports recomputed against it', async () => {
    // The episode ran `3` and `x+2`, then submitted `2*x` (wrong for 3*x, right for itself).
    const rs = await relabelEpisode(['3', 'x+2', '2*x'], tool, sandbox, env, 100);
    expect(rs.map((r) => r.key)).toEqual([
      'easy:hindsight:3,3,3,3,3,3',
      'easy:hindsight:3,2,4,6,7,12|3',
      'easy:hindsight:2,0,4,8,10,20|3;x+2',
    ]);
    expect(rs.map((r) => r.trajectory.turns)).toEqual([1, 2, 3]);
    const { task, trajectory: t, length } = rs[2] as Relabelled;
    expect(task.kind).toBe('tooluse');
    expect(task.examples).toEqual([{ input: 1, output: 2 }]);
    expect(task.tests?.map((e) => e.output)).toEqual([0, 4, 8]);
    expect(task.hidden.map((e) => e.output)).toEqual([10, 20]);
    expect(length).toBe(1 + 3 + 3);
    expect(t.solved).toBe(true);
    // Two runs, each answered as the relabelled task answers it, then the submit.
    const text = renderTokens(t.tokens);
    expect(text).toContain('3 <run> pass 0 of 3 ; f( 0 )= 0 got 3 ; f( 2 )= 4 got 3 <sep>');
    expect(text).toContain('x + 2 <run> pass 1 of 3 ; f( 0 )= 0 got 2 ; f( 4 )= 8 got 6 <sep>');
    expect(t.tokens.slice(-4)).toEqual([tokenId('2'), tokenId('*'), tokenId('x'), SUBMIT]);
    // Every policy token was legal where it stands; report tokens are not the policy's.
    for (const [i, o] of t.owned.entries()) {
      if (!o) continue;
      expect(t.legal[i * VOCAB_SIZE + (t.tokens[i] as number)]).toBe(1);
      expect(t.logProbs[i]).toBeNaN();
    }
    expect(t.owned.filter((o) => o === 1)).toHaveLength(length + 3);
  });

  it('relabels a one-turn episode as one turn, and leaves out a goal that fails', async () => {
    const [one, ...rest] = await relabelEpisode(['x+2'], tool, sandbox, env, 100);
    expect(rest).toHaveLength(0);
    expect(one?.trajectory.turns).toBe(1);
    expect(one?.key).toBe('easy:hindsight:3,2,4,6,7,12');
    const rs = await relabelEpisode(['3', 'x%0'], tool, sandbox, env, 100);
    expect(rs.map((r) => r.key)).toEqual(['easy:hindsight:3,3,3,3,3,3']);
  });

  it('gives the variants of a goal the runs before it', async () => {
    const rs = await relabelEpisode(['3', 'x+2'], tool, sandbox, env, 100, 3, new Rng(7));
    expect(rs.length).toBeGreaterThan(2);
    for (const r of rs) expect(r.trajectory.turns).toBe(r.key.endsWith('|3') ? 2 : 1);
    expect(rs.filter((r) => r.trajectory.turns === 2).length).toBeGreaterThan(1);
  });
});

describe('mutateProgram', () => {
  it('changes one digit to another digit or one operator to another, distinct variants up to n', () => {
    const rng = new Rng(3);
    const seen = { digit: 0, operator: 0 };
    for (const program of ['x-5', '7*x+12', 'x>3?x:9%4']) {
      const variants = mutateProgram(program, 4, rng);
      expect(variants).toHaveLength(4);
      expect(new Set(variants).size).toBe(4);
      for (const v of variants) {
        expect(v).toHaveLength(program.length);
        const changed = [...v].flatMap((c, i) => (c === program[i] ? [] : [[program[i], c]]));
        expect(changed).toHaveLength(1);
        const [[from = '', to = '']] = changed as [[string, string]];
        const digits = /^[0-9]$/;
        const operators = /^[-+*%]$/;
        if (digits.test(from)) {
          expect(to).toMatch(digits);
          seen.digit += 1;
        } else {
          expect(from).toMatch(operators);
          expect(to).toMatch(operators);
          seen.operator += 1;
        }
      }
    }
    expect(seen.digit).toBeGreaterThan(0);
    expect(seen.operator).toBeGreaterThan(0);
  });

  it('gives fewer when there are fewer, and none with nothing to change', () => {
    const rng = new Rng(1);
    expect(mutateProgram('x', 3, rng)).toEqual([]);
    expect(mutateProgram('x>x?x:x', 3, rng)).toEqual([]); // comparisons and x stay
    const all = mutateProgram('x+1', 50, rng); // 9 other digits, 3 other operators
    expect(all.length).toBeLessThanOrEqual(12);
    expect(all.length).toBeGreaterThan(6);
    expect(mutateProgram('x+1', 0, rng)).toEqual([]);
  });
});

const fake = (key: string, length: number): Relabelled => ({
  key,
  length,
  task: { id: key, level: 'easy', examples: [], hidden: [] },
  trajectory: {
    taskId: key,
    level: 'easy',
    group: 'hindsight',
    tokens: Array.from({ length }, () => 1),
    owned: [],
    rewards: [],
    logProbs: [],
    values: [],
    versions: [],
    legal: new Uint8Array(0),
    solved: true,
    turns: 1,
    return: 1,
    parts: { pass: 1, ranOk: 0, closeness: 0, turnCost: 0, noSubmit: 0, total: 1 },
  },
});

describe('HindsightPool', () => {
  it('teaches the shortest program seen for each relabelled task', () => {
    const pool = new HindsightPool(10);
    pool.add(fake('a', 5));
    pool.add(fake('a', 3));
    pool.add(fake('a', 4));
    const drawn = pool.sample(20, 0, new Rng(1));
    expect(new Set(drawn.map((t) => t.tokens.length))).toEqual(new Set([3]));
    expect(pool.size).toBe(3);
    expect(pool.distinct).toBe(1);
  });

  it('keeps the last `capacity` occurrences and forgets tasks no longer among them', () => {
    const pool = new HindsightPool(3);
    for (const k of ['a', 'b', 'b', 'c', 'c']) pool.add(fake(k, 2));
    expect(pool.size).toBe(3);
    expect(pool.distinct).toBe(2); // 'a' and the first 'b' fell out; 'b' is still referenced once
    expect(new Set(pool.sample(50, 0, new Rng(2)).map((t) => t.taskId))).toEqual(new Set(['b', 'c']));
    expect(pool.added).toBe(5);
  });

  it('draws by occurrence, or uniformly over distinct tasks', () => {
    const pool = new HindsightPool(100);
    for (let i = 0; i < 9; i++) pool.add(fake('common', 2));
    pool.add(fake('rare', 2));
    const share = (uniform: number) =>
      pool.sample(2000, uniform, new Rng(3)).filter((t) => t.taskId === 'rare').length / 2000;
    expect(share(0)).toBeGreaterThan(0.07);
    expect(share(0)).toBeLessThan(0.13);
    expect(share(1)).toBeGreaterThan(0.45);
    expect(share(1)).toBeLessThan(0.55);
  });

  it('is restored from its snapshot as it was: the same draws, sizes and shortest programs', () => {
    const pool = new HindsightPool(4);
    for (const [k, n] of [
      ['a', 5],
      ['b', 2],
      ['a', 3],
      ['c', 4],
      ['b', 2],
    ] as const)
      pool.add(fake(k, n));
    // A structured clone, as IndexedDB stores it.
    const stored = structuredClone(pool.snapshot());
    const back = new HindsightPool(4);
    back.restore(stored);
    expect([back.size, back.distinct]).toEqual([pool.size, pool.distinct]);
    expect(back.sample(30, 0.5, new Rng(7))).toEqual(pool.sample(30, 0.5, new Rng(7)));
    expect(back.pickTask(new Rng(8))).toEqual(pool.pickTask(new Rng(8)));
    // Its counts came from the keys: one more 'b' and one more 'c' push the older 'a' out.
    back.add(fake('b', 2));
    back.add(fake('c', 4));
    expect(back.distinct).toBe(2);
    // A smaller pool keeps the newest; keys whose episode is missing are left out.
    const small = new HindsightPool(2);
    small.restore({ ...stored, best: stored.best.filter((b) => b.key !== 'b') });
    expect([small.size, small.distinct]).toEqual([1, 1]);
  });

  it('poses its distinct relabelled tasks uniformly, whatever their occurrences', () => {
    const pool = new HindsightPool(100);
    expect(pool.pickTask(new Rng(4))).toBeNull();
    for (let i = 0; i < 9; i++) pool.add(fake('common', 2));
    pool.add(fake('rare', 2));
    const rng = new Rng(5);
    const ids = Array.from({ length: 2000 }, () => pool.pickTask(rng)?.id);
    const rare = ids.filter((id) => id === 'rare').length / ids.length;
    expect(rare).toBeGreaterThan(0.45);
    expect(rare).toBeLessThan(0.55);
    expect(new Set(ids)).toEqual(new Set(['common', 'rare']));
  });

  it('is empty, and stays empty, when off (capacity 0)', () => {
    const pool = new HindsightPool(0);
    pool.add(fake('a', 2));
    expect(pool.sample(4, 0, new Rng(1))).toEqual([]);
  });
});

describe('validateHindsight', () => {
  it('accepts the defaults and names a bad field', () => {
    expect(() => validateHindsight(DEFAULT_HINDSIGHT)).not.toThrow();
    expect(() => validateHindsight({ ...DEFAULT_HINDSIGHT, uniformFraction: 2 })).toThrow(/uniformFraction/);
    expect(() => validateHindsight({ ...DEFAULT_HINDSIGHT, samplesPerBatch: 1.5 })).toThrow(
      /samplesPerBatch/,
    );
    expect(() => validateHindsight({ ...DEFAULT_HINDSIGHT, maxAbsOutput: 0 })).toThrow(/maxAbsOutput/);
  });
});

describe('decontamination', () => {
  const suite = generateTasks(1);
  const heldOut = [...suite.filter((t) => t.heldOut), ...generalisationTasks(suite)];
  const index = new HeldOutIndex(heldOut);
  const plain = ({ id, level, examples, hidden }: Task): Task => ({ id, level, examples, hidden });
  // A held-out `x-b` whose `x+b` is a training task: the policy writes `x+b`, a variant is `x-b`.
  const held = suite.find(
    (t) =>
      t.heldOut &&
      t.family === 'x+b' &&
      t.program.startsWith('x-') &&
      suite.some((u) => !u.heldOut && u.program === t.program.replace('-', '+')),
  ) as GeneratedTask;
  const written = held.program.replace('-', '+');
  const training = plain(suite.find((t) => !t.heldOut && t.program === written) as GeneratedTask);

  it('drops a variant of a written program that computes a held-out task, and counts it', async () => {
    // Every one-token variant of the written program, relabelled on the training task's inputs.
    const relabelled = await relabelEpisode(
      [written],
      training,
      sandbox,
      DEFAULT_ENV_CONFIG,
      200,
      40,
      new Rng(3),
    );
    const variant = relabelled.find((r) =>
      r.task.hidden.every((e, i) => e.output === held.hidden[i]?.output),
    );
    expect(variant, `the variant ${held.program} among the relabelled`).toBeDefined();
    const pool = new HindsightPool(100, index);
    const kept = relabelled.map((r) => pool.add(r));
    expect(kept[relabelled.indexOf(variant as Relabelled)]).toBe(false);
    expect(pool.decontaminated).toBe(kept.filter((k) => !k).length);
    expect(pool.decontaminated).toBeGreaterThanOrEqual(1);
    expect(pool.added + pool.decontaminated).toBe(relabelled.length);
    // Nothing the pool trains on computes a held-out task.
    expect(pool.snapshot().best.some((b) => b.key === (variant as Relabelled).key)).toBe(false);
  });

  it('keeps an innocent relabel: the written program, a training task', async () => {
    const r = (await relabel(written, training, sandbox, DEFAULT_ENV_CONFIG, 200)) as Relabelled;
    const pool = new HindsightPool(100, index);
    expect(pool.add(r)).toBe(true);
    expect([pool.added, pool.decontaminated, pool.distinct]).toEqual([1, 0, 1]);
  });

  it("compares at the held-out task's own inputs: a generalisation task shown at other inputs", async () => {
    // The held-out `x-b` at inputs 3, 6, 8 (generalisation): a program relabelled at 1, 2, 4 that
    // computes it (`x+0-b`, another text) is dropped too, from its outputs at the probe inputs.
    const shifted = heldOut.find((t) => t.id === `${held.id}@3,6,8`) as Task;
    expect(shifted).toBeDefined();
    const onlyShifted = new HindsightPool(100, new HeldOutIndex([shifted]));
    const r = (await relabel(
      `x+0${held.program.slice(1)}`,
      training,
      sandbox,
      DEFAULT_ENV_CONFIG,
      200,
    )) as Relabelled;
    expect(r.probe).toHaveLength(PROBE_INPUTS.length);
    expect(onlyShifted.add(r)).toBe(false);
    expect(onlyShifted.decontaminated).toBe(1);
  });

  it('leaves out of a restored pool what computes a held-out task', async () => {
    const bad = (await relabel(held.program, training, sandbox, DEFAULT_ENV_CONFIG, 200)) as Relabelled;
    const good = (await relabel(written, training, sandbox, DEFAULT_ENV_CONFIG, 200)) as Relabelled;
    const open = new HindsightPool(100);
    open.add(bad);
    open.add(good);
    const snap = open.snapshot();
    // A pool saved before decontamination: no probes, checked at its tasks' own inputs.
    snap.best = snap.best.map(({ probe: _p, ...b }) => b);
    const clean = new HindsightPool(100, index);
    clean.restore(snap);
    expect(clean.snapshot().best.map((b) => b.key)).toEqual([good.key]);
  });
});
