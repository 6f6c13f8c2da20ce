import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { imitationBatch } from './synthetic';
import { DEFAULT_MODEL_ARGS, type ModelArgs } from '../policy/config';
import { DEFAULT_LORA, LORA_TRAINED_WHOLE, mergeLora, type LoraConfig } from '../policy/lora';
import { forward } from '../policy/model';
import { freshOptimizerNotice, missingBase, policyFromCheckpoint, trainerFromCheckpoint } from './restore';
import { PolicyTrainer } from './trainer';
import {
  packOptimizer,
  packParams,
  packTensors,
  unpackTensors,
  type Checkpoint,
  type PackedTensors,
} from '../policy/weights';
import { DEFAULT_TRAINER_CONFIG, type TrainerConfig } from './learner-config';

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

/** `packed` without the entries `drop` rejects, repacked. */
async function without(
  packed: PackedTensors,
  drop: (name: string, i: number) => boolean,
): Promise<PackedTensors> {
  const all = unpackTensors(packed);
  const out = await packTensors(all.filter(({ name }, i) => !drop(name, i)));
  tf.dispose(all.map((n) => n.tensor));
  return out;
}

describe('resuming where retention dropped the optimiser state', () => {
  const batch = (i: number) => imitationBatch(4, args.contextLength, 20 + i);

  it('from the newest version (Adam state kept) continues exactly, and says nothing', async () => {
    const original = new PolicyTrainer(args, config);
    await original.trainStep(batch(0));
    const newest = await stored(original);
    expect(freshOptimizerNotice(newest, 1)).toBeUndefined();
    const restored = await trainerFromCheckpoint(newest, undefined, config);
    await original.trainStep(batch(1));
    await restored.trainStep(batch(1));
    values(restored.params).forEach((g, i) =>
      g.forEach((x, j) => expect(x).toBeCloseTo(values(original.params)[i]?.[j] ?? NaN, 5)),
    );
    original.dispose();
    restored.dispose();
  });

  it('from an older version (Adam state pruned) goes on from its weights and step with fresh moments, saying so', async () => {
    const before = tf.memory().numTensors;
    const original = new PolicyTrainer(args, config);
    await original.trainStep(batch(0));
    await original.trainStep(batch(1));
    // As retention leaves an older version: the weights and step, no optimiser state.
    const { optimizer, ...pruned } = await stored(original);
    expect(optimizer).toBeDefined();
    expect(freshOptimizerNotice(pruned, 2)).toMatch(
      /version 2 holds no optimiser state.*step 2 with fresh Adam moments/,
    );

    const restored = await trainerFromCheckpoint(pruned, undefined, config);
    expect(restored.step).toBe(2);
    expect(values(restored.params)).toEqual(values(original.params));
    // Fresh moments: the same step as a new trainer on the same weights, not as the original.
    const fresh = new PolicyTrainer(args, config, policyFromCheckpoint(pruned, undefined));
    await Promise.all([restored, fresh, original].map((t) => t.trainStep(batch(2))));
    const got = values(restored.params);
    values(fresh.params).forEach((w, i) => w.forEach((x, j) => expect(got[i]?.[j]).toBeCloseTo(x, 5)));
    const moved = got.flat().some((x, k) => Math.abs(x - (values(original.params).flat()[k] ?? x)) > 1e-6);
    expect(moved).toBe(true);
    for (const t of [original, restored, fresh]) t.dispose();
    expect(tf.memory().numTensors).toBe(before);
  });
});

describe('a stored Adam state that does not fit the trainer', () => {
  it('a LoRA trainer stored as the Trainer panel used to (its base, with the adapters’ Adam state) is refused, saying why', async () => {
    const t = new PolicyTrainer(args, config, undefined, DEFAULT_LORA);
    await t.trainStep(imitationBatch(4, args.contextLength, 1));
    const old: Checkpoint = {
      format: 'sandbox-rl-lab/weights@1',
      model: t.args,
      params: await packParams(t.params),
      optimizer: await packOptimizer(t.optimizer),
      step: t.step,
    };
    const before = tf.memory().numTensors;
    await expect(trainerFromCheckpoint(old, undefined, config)).rejects.toThrow(
      /the stored Adam state holds \d+ moments, the trainer trains \d+ tensors \(parameters, \d+ moments\): the version's optimiser state is not for its weights/,
    );
    expect(tf.memory().numTensors).toBe(before);
    t.dispose();
  });

  it('a full version with the Adam state of another model shape is refused, naming the tensor', async () => {
    const t = new PolicyTrainer(args, config);
    const wide = new PolicyTrainer({ ...args, dMlp: 64 }, config);
    await wide.trainStep(imitationBatch(4, args.contextLength, 1));
    await t.trainStep(imitationBatch(4, args.contextLength, 1));
    const mixed = { ...(await stored(t)), optimizer: await packOptimizer(wide.optimizer) };
    const before = tf.memory().numTensors;
    await expect(trainerFromCheckpoint(mixed, undefined, config)).rejects.toThrow(
      /the stored Adam moment h0\.mlp\.w1\/m is \[16, 64\], the trainer's h0\.mlp\.w1 \[16, 32\]/,
    );
    expect(tf.memory().numTensors).toBe(before);
    t.dispose();
    wide.dispose();
  });

  it('adapters with a full trainer’s Adam state are refused', async () => {
    const t = new PolicyTrainer(args, config, undefined, DEFAULT_LORA);
    const full = new PolicyTrainer(args, config);
    const base = await t.exportPolicy(true);
    await t.trainStep(imitationBatch(4, args.contextLength, 1));
    await full.trainStep(imitationBatch(4, args.contextLength, 1));
    const mixed = { ...(await stored(t)), optimizer: await packOptimizer(full.optimizer) };
    const before = tf.memory().numTensors;
    await expect(trainerFromCheckpoint(mixed, base, config)).rejects.toThrow(
      /\(LoRA adapters, \d+ moments\)/,
    );
    expect(tf.memory().numTensors).toBe(before);
    t.dispose();
    full.dispose();
  });

  it('a LoRA version stored before the value head trained beside the adapters still loads and trains', async () => {
    const t = new PolicyTrainer(args, config, undefined, DEFAULT_LORA);
    const base = await t.exportPolicy(true);
    await t.trainStep(imitationBatch(4, args.contextLength, 1));
    const now = await stored(t);
    const n = t.adapters?.size ?? 0;
    const whole = LORA_TRAINED_WHOLE.length;
    // Moments: iter, then n first moments, then n second ones; the value head's are the last of each.
    const older: Checkpoint = {
      ...now,
      params: await without(now.params, (name) => LORA_TRAINED_WHOLE.includes(name)),
      optimizer: await without(
        now.optimizer ?? now.params,
        (_n, i) => (i > n - whole && i <= n) || i > 2 * n - whole,
      ),
    };
    expect(older.optimizer?.entries.length).toBe(1 + 2 * (n - whole));
    const restored = await trainerFromCheckpoint(older, base, config);
    const m = await restored.trainStep(imitationBatch(4, args.contextLength, 2));
    expect(Number.isFinite(m.loss)).toBe(true);
    t.dispose();
    restored.dispose();
  });

  it('a checkpoint whose trainer cannot be built (LoRA rank 0) leaks nothing', async () => {
    const t = new PolicyTrainer(args, config, undefined, DEFAULT_LORA);
    const base = await t.exportPolicy(true);
    const bad = { ...(await stored(t)), lora: { ...DEFAULT_LORA, rank: 0 } };
    const before = tf.memory().numTensors;
    await expect(trainerFromCheckpoint(bad, base, config)).rejects.toThrow(/rank must be a positive integer/);
    expect(tf.memory().numTensors).toBe(before);
    t.dispose();
  });
});

describe('a version saved from the Trainer panel (save(): the policy as a pipeline publishes it)', () => {
  it('of a LoRA trainer: its base goes first when the run lacks it, and the adapters load back onto it', async () => {
    const batch = (i: number) => imitationBatch(4, args.contextLength, 20 + i);
    const t = new PolicyTrainer(args, config, undefined, DEFAULT_LORA);
    await t.trainStep(batch(0));
    const base = await missingBase(t, undefined);
    if (!base) throw new Error('no base');
    expect(base.lora).toBeUndefined();
    expect(base.optimizer).toBeUndefined();
    expect(base.step).toBe(0);
    const adapters = await stored(t);
    expect(adapters.lora).toEqual(DEFAULT_LORA);
    // The run holds it now: nothing more to store; another base (or none) needs it again.
    expect(await missingBase(t, base)).toBeUndefined();
    const other = new PolicyTrainer(args, { ...config, seed: 9 }, undefined, DEFAULT_LORA);
    expect(await missingBase(t, await other.exportPolicy(true))).toBeDefined();
    expect(await missingBase(t, adapters)).toBeDefined();
    const full = new PolicyTrainer(args, config);
    expect(await missingBase(full, undefined)).toBeUndefined();

    const restored = await trainerFromCheckpoint(adapters, base, config);
    expect(restored.step).toBe(1);
    await t.trainStep(batch(1));
    await restored.trainStep(batch(1));
    expect(values(restored.adapters)).toEqual(values(t.adapters));
    expect(values(restored.params)).toEqual(values(t.params));
    const plain = await trainerFromCheckpoint(base, undefined, config); // the base alone loads too
    expect(plain.adapters).toBeNull();
    for (const x of [t, other, full, restored, plain]) x.dispose();
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
