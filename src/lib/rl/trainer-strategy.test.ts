import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_ARGS, type ModelArgs } from '../policy/config';
import { packOptimizer } from '../policy/weights';
import { seedImportance, seedImportanceOf } from './importance';
import { DEFAULT_TRAINER_CONFIG, type TrainerConfig } from './learner-config';
import { layerOf } from './strategy';
import { imitationBatch } from './synthetic';
import { PolicyTrainer } from './trainer';
import { ppoUpdate } from './update';
import { trainerFromCheckpoint } from './restore';

const args: ModelArgs = { ...DEFAULT_MODEL_ARGS, contextLength: 16, dModel: 16, nHeads: 2, dMlp: 32 };
const base: TrainerConfig = { ...DEFAULT_TRAINER_CONFIG, learningRate: 1e-2, loss: 'pg' };
const batch = (seed: number) => imitationBatch(4, args.contextLength, seed);

beforeAll(async () => {
  await tf.setBackend('cpu');
});

/** Every parameter's values by name. */
function values(t: PolicyTrainer): Map<string, Float32Array> {
  return new Map([...t.params].map(([n, v]) => [n, v.dataSync() as Float32Array]));
}

/** The names of the parameters whose values changed between two snapshots. */
function changed(before: Map<string, Float32Array>, after: Map<string, Float32Array>): string[] {
  return [...before].filter(([n, v]) => !after.get(n)?.every((x, i) => Object.is(x, v[i]))).map(([n]) => n);
}

describe('the trainer under an update strategy', () => {
  it('frozen: frozen tensors are bit-identical after a step, and have no Adam moments', async () => {
    const t = new PolicyTrainer(args, {
      ...base,
      strategy: 'frozen',
      frozenBlocks: 1,
      freezeEmbeddings: true,
    });
    const before = values(t);
    const m = await ppoUpdate(t, batch(1), { updates: 2, version: 0 });
    const moved = changed(before, values(t));
    const frozen = [...t.params.keys()].filter((n) => layerOf(n) === 'embeddings' || layerOf(n) === 0);
    expect(frozen).toHaveLength(14);
    for (const n of frozen) expect(moved).not.toContain(n);
    expect(moved.length).toBeGreaterThan(0);
    expect(m.tensorsTrained).toBe(t.params.size - 14);
    expect(t.strategyReport()).toMatchObject({ strategy: 'frozen', tensorsTrained: t.params.size - 14 });
    const adam = await packOptimizer(t.optimizer);
    const stored = adam.entries.map((e) => e.name.replace(/\/[mv]$/, ''));
    for (const n of frozen) expect(stored).not.toContain(n);
    expect(adam.entries).toHaveLength(1 + 2 * (t.params.size - 14));

    // A version stored with these moments resumes under the same strategy.
    const ckpt = { ...(await t.exportPolicy()), optimizer: adam };
    const resumed = await trainerFromCheckpoint(ckpt, undefined, t.config);
    await ppoUpdate(resumed, batch(2), { updates: 1, version: 1 });
    await ppoUpdate(t, batch(2), { updates: 1, version: 1 });
    // The same step from the same state (Adam's bias correction restored as β^(t+1): close, not bit for bit).
    const [got, want] = [values(resumed), values(t)];
    for (const [n, w] of want) got.get(n)?.forEach((x, i) => expect(x).toBeCloseTo(w[i] ?? NaN, 5));
    for (const n of frozen) expect(got.get(n)).toEqual(before.get(n));
    resumed.dispose();
    t.dispose();
  });

  it('full: every tensor trains and the step is the same as without a strategy', async () => {
    const t = new PolicyTrainer(args, base);
    await ppoUpdate(t, batch(1), { updates: 1, version: 0, performance: 0.5, rate: 5e-3 });
    expect(t.strategyReport()).toMatchObject({ tensorsTrained: t.params.size, rate: 5e-3 });
    const twin = new PolicyTrainer(args, base);
    twin.optimizer.rate = 5e-3;
    await twin.trainStep(batch(1));
    expect(changed(values(twin), values(t))).toEqual([]);
    for (const x of [t, twin]) x.dispose();
  });

  it('adaptive: the rate moves ×1.1 on a rising trend and ×0.9 on a falling one, within its clamp', async () => {
    const cfg: TrainerConfig = {
      ...base,
      strategy: 'adaptive',
      trendSpan: 1,
      adaptiveMinRate: 1e-3,
      adaptiveMaxRate: 3.5e-3,
      importanceEvery: 0,
    };
    const t = new PolicyTrainer(args, cfg);
    const rates: number[] = [];
    for (const [v, p] of [0.2, 0.3, 0.4, 0.5, 0.3].entries())
      rates.push(
        (await ppoUpdate(t, batch(v), { updates: 1, version: v, performance: p, rate: 3e-3 })).learningRate,
      );
    expect(rates[0]).toBeCloseTo(3e-3, 9);
    expect(rates[1]).toBeCloseTo(3.3e-3, 9); // rising: ×1.1
    expect(rates[2]).toBeCloseTo(3.5e-3, 9); // ×1.1 would pass the clamp
    expect(rates[3]).toBeCloseTo(3.5e-3, 9);
    expect(rates[4]).toBeCloseTo(3.5e-3 * 0.9, 9); // falling: ×0.9
    t.dispose();
  });

  it('selective: only tensors above the importance threshold train', async () => {
    const t = new PolicyTrainer(args, { ...base, strategy: 'selective', selectiveThreshold: 0.3 });
    const imp = await seedImportance(t.params);
    const above = [...imp].filter(([, v]) => v > 0.3).map(([n]) => n);
    expect(above.length).toBeGreaterThan(0);
    expect(above.length).toBeLessThan(t.params.size);
    const before = values(t);
    await ppoUpdate(t, batch(1), { updates: 1, version: 0 });
    const moved = changed(before, values(t));
    for (const n of moved) expect(above).toContain(n);
    expect(t.strategyReport()?.tensorsTrained).toBe(above.length);
    expect(t.optimizer.withState).toHaveLength(above.length); // Adam state for those alone
    t.dispose();
  });

  it('selective by gradient: every tensor trains once to measure |Σ g·w|, then those above the threshold', async () => {
    const t = new PolicyTrainer(args, {
      ...base,
      strategy: 'selective',
      selectiveBy: 'gradient',
      selectiveThreshold: 0.2,
      importanceEvery: 1,
    });
    const snap0 = values(t);
    await ppoUpdate(t, batch(1), { updates: 1, version: 0 });
    expect(changed(snap0, values(t))).toHaveLength(t.params.size); // nothing measured yet: all train
    const snap1 = values(t);
    await ppoUpdate(t, batch(2), { updates: 1, version: 1 });
    const ranked = t.strategyReport()?.importance?.gradient ?? {};
    expect(Object.keys(ranked)).toHaveLength(t.params.size); // the first update observed every tensor
    const above = Object.entries(ranked)
      .filter(([, v]) => v > 0.2)
      .map(([n]) => n);
    expect(above.length).toBeGreaterThan(0);
    expect(above.length).toBeLessThan(t.params.size);
    const moved = changed(snap1, values(t));
    expect(moved.length).toBeGreaterThan(0);
    for (const n of moved) expect(above).toContain(n);
    expect(t.strategyReport()?.tensorsTrained).toBe(above.length);
    expect(t.optimizer.withState).toHaveLength(above.length);
    // The next window observes only those; the ones left out keep their measured rank.
    await ppoUpdate(t, batch(3), { updates: 1, version: 2 });
    expect(Object.keys(t.strategyReport()?.importance?.gradient ?? {}).sort()).toEqual([...above].sort());
    expect(t.strategyReport()?.tensorsTrained).toBeLessThan(t.params.size);
    t.dispose();
  });

  it('gradual: the heads first, then the top block at its version', async () => {
    const t = new PolicyTrainer(args, { ...base, strategy: 'gradual', gradualEvery: 2 });
    const snap0 = values(t);
    await ppoUpdate(t, batch(1), { updates: 1, version: 0 });
    const first = changed(snap0, values(t));
    expect(new Set(first.map(layerOf))).toEqual(new Set(['heads']));
    await ppoUpdate(t, batch(2), { updates: 1, version: 1 });
    const snap2 = values(t);
    await ppoUpdate(t, batch(3), { updates: 1, version: 2 });
    const third = changed(snap2, values(t));
    expect(new Set(third.map(layerOf))).toEqual(new Set(['heads', 1]));
    t.dispose();
  });

  it('reports the importance every N versions; the seed’s matches the formula on a tensor', async () => {
    const t = new PolicyTrainer(args, { ...base, importanceEvery: 2 });
    const seen: (number | undefined)[] = [];
    const valuesAt0 = values(t);
    for (let v = 0; v < 5; v++) {
      await ppoUpdate(t, batch(v), { updates: 1, version: v });
      seen.push(t.strategyReport()?.importance ? v : undefined);
      if (v === 0) {
        const imp = t.strategyReport()?.importance;
        // Normalised by the largest: head.w relative to tok_emb equals the raw formula's ratio.
        const raw = (n: string) => seedImportanceOf(valuesAt0.get(n) ?? []);
        const max = Math.max(...[...valuesAt0.keys()].map(raw));
        expect(imp?.seed['head.w']).toBeCloseTo(raw('head.w') / max, 3);
        expect(imp?.gradient).toEqual({}); // no step observed yet
      }
    }
    expect(seen.filter((v) => v !== undefined)).toEqual([0, 2, 4]);
    const grad = t.strategyReport()?.importance?.gradient ?? {};
    expect(Object.keys(grad)).toHaveLength(t.params.size);
    expect(Math.max(...Object.values(grad))).toBe(1);
    t.dispose();
  });

  it('refuses a strategy other than full or lora with LoRA, and lora without it', () => {
    expect(
      () => new PolicyTrainer(args, { ...base, strategy: 'frozen' }, undefined, { rank: 2, alpha: 4 }),
    ).toThrow(/with LoRA the strategy is lora/);
    expect(() => new PolicyTrainer(args, { ...base, strategy: 'lora' })).toThrow(/set policy\.lora/);
  });
});
