import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { imitationBatch } from '../rl/synthetic';
import { DEFAULT_MODEL_ARGS, DEFAULT_TRAINER_CONFIG, type ModelArgs, type TrainerConfig } from './config';
import { DEFAULT_LORA, mergeLora, type LoraConfig } from './lora';
import { forward } from './model';
import { policyFromCheckpoint, trainerFromCheckpoint } from './restore';
import { PolicyTrainer } from './trainer';
import { packOptimizer, type Checkpoint } from './weights';

const args: ModelArgs = { ...DEFAULT_MODEL_ARGS, contextLength: 16, dModel: 16, nHeads: 2, dMlp: 32 };
const config: TrainerConfig = { ...DEFAULT_TRAINER_CONFIG, learningRate: 1e-2, loss: 'ppo' };

beforeAll(async () => {
  await tf.setBackend('cpu');
});

/** What the trainer worker stores for a version: the published policy plus the Adam state. */
async function stored(t: PolicyTrainer, full = false): Promise<Checkpoint> {
  return { ...(await t.exportPolicy(full)), optimizer: await packOptimizer(t.optimizer) };
}

const values = (m: ReadonlyMap<string, tf.Tensor> | null) =>
  [...(m ?? new Map<string, tf.Tensor>()).values()].map((v) => Array.from(v.dataSync()));

/** Trains `original` two steps, restores a second trainer after the first, and steps it the same. */
async function resumeMatches(lora?: LoraConfig): Promise<void> {
  const batch = (i: number) => imitationBatch(4, args.contextLength, 10 + i);
  const original = new PolicyTrainer(args, config, undefined, lora);
  const base = await original.exportPolicy(true); // version 0
  await original.trainStep(batch(0));
  const v1 = await stored(original);
  if (lora) expect(v1.lora).toEqual(lora);
  await original.trainStep(batch(1));

  const restored = await trainerFromCheckpoint(v1, lora ? base : undefined, config);
  expect(restored.step).toBe(1);
  expect(restored.lora).toEqual(lora);
  await restored.trainStep(batch(1));
  // The same step from the same state: the same weights (Adam's moments came back too).
  for (const [got, want] of [
    [values(restored.params), values(original.params)],
    [values(restored.adapters), values(original.adapters)],
  ] as const) {
    expect(got.length).toBe(want.length);
    got.forEach((g, i) => g.forEach((x, j) => expect(x).toBeCloseTo(want[i]?.[j] ?? NaN, 5)));
  }
  original.dispose();
  restored.dispose();
}

describe('a trainer restored from a stored version', () => {
  it('continues a full run exactly: weights, Adam state and step count', async () => {
    const before = tf.memory().numTensors;
    await resumeMatches();
    expect(tf.memory().numTensors).toBe(before);
  });

  it('continues a LoRA run exactly from its adapters and its base, and the base stays frozen', async () => {
    const before = tf.memory().numTensors;
    await resumeMatches(DEFAULT_LORA);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('continues a LoRA run from its version 0 (the full base) with adapters, as the run was set', async () => {
    const original = new PolicyTrainer(args, config, undefined, DEFAULT_LORA);
    const v0 = await stored(original, true); // a LoRA run's version 0 is the full base
    expect(v0.lora).toBeUndefined();
    const restored = await trainerFromCheckpoint(v0, undefined, config, DEFAULT_LORA);
    expect(restored.lora).toEqual(DEFAULT_LORA);
    expect(restored.adapters).not.toBeNull();
    expect(restored.parameterCount).toBe(original.parameterCount);
    // The base itself is what was stored.
    expect(values(restored.params)).toEqual(values(original.params));
    original.dispose();
    restored.dispose();
  });

  it('continues a trained full version as it was trained, every parameter, whatever the LoRA setting', async () => {
    const full = new PolicyTrainer(args, config);
    await full.trainStep(imitationBatch(4, args.contextLength, 1));
    const v1 = await stored(full);
    const restored = await trainerFromCheckpoint(v1, undefined, config, DEFAULT_LORA);
    expect(restored.adapters).toBeNull();
    await restored.trainStep(imitationBatch(4, args.contextLength, 2)); // its Adam state fits
    full.dispose();
    restored.dispose();
  });

  it('refuses a LoRA version without a full base, or with a LoRA one, saying why', async () => {
    const t = new PolicyTrainer(args, config, undefined, DEFAULT_LORA);
    const adapters = await stored(t);
    await expect(trainerFromCheckpoint(adapters, undefined, config)).rejects.toThrow(/no full version/);
    await expect(trainerFromCheckpoint(adapters, adapters, config)).rejects.toThrow(/must be a full version/);
    const other = { ...(await t.exportPolicy(true)), model: { ...args, dModel: 32 } };
    await expect(trainerFromCheckpoint(adapters, other, config)).rejects.toThrow(/different model shapes/);
    t.dispose();
  });

  it('refuses adapters of another rank, disposing what it built', async () => {
    const t = new PolicyTrainer(args, config, undefined, DEFAULT_LORA);
    const base = await t.exportPolicy(true);
    const adapters = await stored(t);
    const before = tf.memory().numTensors;
    const wrong = { ...adapters, lora: { ...DEFAULT_LORA, rank: 2 } };
    await expect(trainerFromCheckpoint(wrong, base, config)).rejects.toThrow(/adapter .* in the store/);
    expect(tf.memory().numTensors).toBe(before);
    t.dispose();
  });
});

describe('the policy of a stored version, as the starting weights of another run', () => {
  const probe = () => tf.tensor2d([[1, 9, 20, 30, 6, 17]], [1, 6], 'int32');

  it('is a LoRA version merged into its base, as trainable variables, leaking nothing', async () => {
    const t = new PolicyTrainer(args, config, undefined, DEFAULT_LORA);
    const base = await t.exportPolicy(true);
    await t.trainStep(imitationBatch(4, args.contextLength, 3));
    const adapters = await stored(t);
    const before = tf.memory().numTensors;
    const params = policyFromCheckpoint(adapters, base);
    expect(tf.memory().numTensors).toBe(before + params.size);
    expect([...params.values()].every((v) => v.trainable)).toBe(true);
    const own = t.adapters;
    if (!own) throw new Error('no adapters');
    const want = tf.tidy(() =>
      forward(mergeLora(t.params, own, DEFAULT_LORA), args, probe()).logits.dataSync(),
    );
    const baseOnly = tf.tidy(() => forward(t.params, args, probe()).logits.dataSync());
    const got = tf.tidy(() => forward(params, args, probe()).logits.dataSync());
    got.forEach((x, i) => expect(x).toBeCloseTo(want[i] ?? NaN, 5));
    expect(Array.from(got).some((x, i) => Math.abs(x - (baseOnly[i] ?? 0)) > 1e-5)).toBe(true);
    await expect(async () => policyFromCheckpoint(adapters, undefined)).rejects.toThrow(/no full version/);
    tf.dispose([...params.values()]);
    t.dispose();
  });

  it('is a full version as stored', async () => {
    const t = new PolicyTrainer(args, config);
    const params = policyFromCheckpoint(await stored(t), undefined);
    const want = values(t.params);
    values(params).forEach((g, i) => expect(g).toEqual(want[i]));
    tf.dispose([...params.values()]);
    t.dispose();
  });
});
