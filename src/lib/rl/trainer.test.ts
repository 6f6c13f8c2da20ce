import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TokenBatch } from './batch';
import { imitationBatch } from './synthetic';
import { DEFAULT_MODEL_ARGS, type ModelArgs } from '../policy/config';
import { DEFAULT_LORA, type LoraConfig } from '../policy/lora';
import { PolicyTrainer } from './trainer';
import { packOptimizer } from '../policy/weights';
import { DEFAULT_TRAINER_CONFIG, type TrainerConfig } from './learner-config';

const args: ModelArgs = { ...DEFAULT_MODEL_ARGS, contextLength: 16, dModel: 16, nHeads: 2, dMlp: 32 };
const config: TrainerConfig = { ...DEFAULT_TRAINER_CONFIG, learningRate: 1e-2, loss: 'pg' };

beforeAll(async () => {
  await tf.setBackend('cpu');
});

const batch = (seed: number) => imitationBatch(4, args.contextLength, seed);

/** `b` with `value` written into `key` at its first position the loss reads. */
function poisoned(b: TokenBatch, key: 'advantages' | 'returns', value: number): TokenBatch {
  const out = { ...b, [key]: Float32Array.from(b[key]) };
  const i = b.mask.findIndex((m) => m > 0);
  out[key][i] = value;
  return out;
}

/** Every trained tensor's values, and Adam's state as stored (step counter and moments). */
async function state(t: PolicyTrainer): Promise<{ weights: number[][]; adam: number[] }> {
  const vars = [...t.params.values(), ...(t.adapters?.values() ?? [])];
  const adam = await packOptimizer(t.optimizer);
  return {
    weights: vars.map((v) => Array.from(v.dataSync())),
    adam: Array.from(new Float32Array(adam.data)),
  };
}

describe('a training step whose loss or gradient is not finite', () => {
  it.each([
    ['full', 'advantages', NaN, undefined, /the loss is NaN: the step was not applied/],
    ['full', 'returns', Infinity, undefined, /the loss is Infinity: the step was not applied/],
    ['LoRA', 'advantages', NaN, DEFAULT_LORA, /the loss is NaN: the step was not applied/],
    // Finite loss, gradients whose squares overflow: the global norm is ∞.
    ['full', 'advantages', 1e25, undefined, /the gradient norm is Infinity: the step was not applied/],
  ] as const)(
    '%s trainer, %s = %s: throws and leaves weights, Adam state and step count as they were',
    async (_label, key, value, lora: LoraConfig | undefined, message) => {
      const t = new PolicyTrainer(args, config, undefined, lora);
      await t.trainStep(batch(1)); // Adam's moments exist
      const before = await state(t);
      const tensors = tf.memory().numTensors;
      await expect(t.trainStep(poisoned(batch(2), key, value))).rejects.toThrow(message);
      expect(tf.memory().numTensors).toBe(tensors);
      expect(t.step).toBe(1);
      expect(await state(t)).toEqual(before);

      // The next good step is the one it would have been: nothing of the bad one remains.
      const twin = new PolicyTrainer(args, config, undefined, lora);
      await twin.trainStep(batch(1));
      const m = await t.trainStep(batch(3));
      const w = await twin.trainStep(batch(3));
      expect(m.step).toBe(2);
      expect(m.loss).toBeCloseTo(w.loss, 6);
      expect(await state(t)).toEqual(await state(twin));
      t.dispose();
      twin.dispose();
    },
    30_000,
  );
});

/** A wider model than `args`, for the imitation check. */
const small: ModelArgs = { ...DEFAULT_MODEL_ARGS, contextLength: 16, dModel: 32, dMlp: 64 };

describe('PolicyTrainer', () => {
  it('moves the weights, leaks no tensors, and lowers the imitation loss against its own start', async () => {
    const trainer = new PolicyTrainer(small, { ...DEFAULT_TRAINER_CONFIG, learningRate: 1e-2 });
    const batch = imitationBatch(8, small.contextLength, 3);
    const before = await trainer.fingerprint();
    const first = await trainer.trainStep(batch);
    const tensorsAfterFirst = tf.memory().numTensors;
    let last = first;
    for (let i = 0; i < 25; i++) last = await trainer.trainStep(batch);
    expect(tf.memory().numTensors).toBe(tensorsAfterFirst);
    const after = await trainer.fingerprint();
    expect(after).not.toEqual(before);
    expect(Number.isFinite(first.loss)).toBe(true);
    expect(first.gradNorm).toBeGreaterThan(0);
    expect(last.pgLoss).toBeLessThan(first.pgLoss * 0.7);
    trainer.dispose();
  });
});

describe('a trainer of a model with tied embeddings', () => {
  it('moves tok_emb through both its uses: a token never read changes only when tied', async () => {
    const b = batch(4);
    const read = new Set(b.tokens);
    const unread = Array.from({ length: args.vocabSize }, (_, v) => v).find((v) => !read.has(v)) ?? -1;
    expect(unread).toBeGreaterThanOrEqual(0);
    const moved = async (a: ModelArgs) => {
      const t = new PolicyTrainer(a, config);
      const emb = t.params.get('tok_emb') as tf.Variable;
      const before = emb.arraySync() as number[][];
      const m = await t.trainStep(b);
      const after = emb.arraySync() as number[][];
      const rowMoved = (v: number) => (after[v] ?? []).some((x, d) => x !== before[v]?.[d]);
      const out = {
        loss: m.pgLoss,
        head: t.params.has('head.w'),
        unread: rowMoved(unread),
        readRow: rowMoved(b.tokens[0] ?? 0),
      };
      t.optimizer.dispose();
      tf.dispose([...t.params.values()]);
      return out;
    };
    const tied = await moved({ ...args, tieEmbeddings: true });
    const untied = await moved(args);
    expect(Number.isFinite(tied.loss)).toBe(true);
    expect(tied).toMatchObject({ head: false, unread: true, readRow: true });
    expect(untied).toMatchObject({ head: true, unread: false, readRow: true });
  });
});
