import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_ARGS, type ModelArgs } from '../policy/config';
import { PolicyTrainer } from './trainer';
import type { TokenBatch } from './batch';
import { VOCAB_SIZE } from '../env/vocab';
import { imitationBatch } from './synthetic';
import type { StepMetrics } from '../policy/metrics';
import { ppoUpdate, proximalApart, proximalLogProbs } from './update';
import { expectNanStepSkipped } from './update.fakes';
import { DEFAULT_TRAINER_CONFIG, type TrainerConfig } from './learner-config';

const args: ModelArgs = { ...DEFAULT_MODEL_ARGS, contextLength: 16, dModel: 16, nHeads: 2, dMlp: 32 };
const config = (loss: TrainerConfig['loss']): TrainerConfig => ({
  ...DEFAULT_TRAINER_CONFIG,
  loss,
  learningRate: 1e-2,
});

beforeAll(async () => {
  await tf.setBackend('cpu');
});

/**
 * An RL batch on the imitation programs: advantages of both signs, and behaviour log-probs of
 * `trainer`'s own policy shifted by `lag` on every other token (0: on-policy).
 */
function rlBatch(trainer: PolicyTrainer, lag: number): TokenBatch {
  const b = imitationBatch(4, args.contextLength, 3);
  const prox = proximalLogProbs(trainer, b);
  const logp = prox.dataSync();
  prox.dispose();
  return {
    ...b,
    advantages: b.advantages.map((a, i) => (i % 3 === 0 ? -a : a)),
    behavLogp: Float32Array.from(logp, (v, i) => v + (i % 2 ? lag : 0)),
  };
}

/** A trainer whose forward passes are counted (each π_prox pass and each step makes one). */
function counted(loss: TrainerConfig['loss']): { trainer: PolicyTrainer; passes: () => number } {
  const trainer = new PolicyTrainer(args, config(loss));
  let n = 0;
  const forward = trainer.forward.bind(trainer);
  trainer.forward = (tokens) => {
    n += 1;
    return forward(tokens);
  };
  return { trainer, passes: () => n };
}

describe('one PPO update', () => {
  it('the entropy floor adds max(0, floor − H) to the loss, nothing while H is above it', async () => {
    const lossWith = async (entropyFloor: number) => {
      const trainer = new PolicyTrainer(args, { ...config('decoupled'), entropyFloor });
      const m = await ppoUpdate(trainer, rlBatch(trainer, 0), { updates: 1 });
      trainer.dispose();
      return m;
    };
    const off = await lossWith(0);
    expect(off.entropy).toBeGreaterThan(0.01);
    expect((await lossWith(off.entropy / 2)).loss).toBeCloseTo(off.loss, 5);
    const high = await lossWith(off.entropy + 3);
    expect(high.loss).toBeCloseTo(off.loss + 3, 4);
    expect(high.entropy).toBeCloseTo(off.entropy, 5);
  });

  it('computes π_prox once per batch, apart only when several steps need it', async () => {
    for (const [loss, updates, lag, passes] of [
      ['decoupled', 3, 0.5, 1 + 3], // one π_prox pass, then a pass per step
      ['decoupled', 1, 0.5, 1], // the one step's own pass stands in
      ['ppo', 3, 0.5, 3], // standard PPO clips against π_behav: no π_prox
    ] as const) {
      const { trainer, passes: count } = counted(loss);
      const batch = rlBatch(trainer, lag);
      const before = count();
      expect(proximalApart(loss, batch, updates)).toBe(passes > updates);
      const steps: StepMetrics[] = [];
      await ppoUpdate(trainer, batch, { updates, onStep: (m) => steps.push(m) });
      expect(count() - before).toBe(passes);
      expect(steps.map((m) => m.step)).toEqual(Array.from({ length: updates }, (_, i) => i + 1));
      trainer.dispose();
    }
  });

  it('relabelled rows (π_behav unknown) make standard PPO compute π_prox apart too', () => {
    const trainer = new PolicyTrainer(args, config('ppo'));
    const batch = rlBatch(trainer, 0);
    batch.behavLogp?.fill(NaN, 0, args.contextLength);
    expect(proximalApart('ppo', batch, 2)).toBe(true);
    expect(proximalApart('ppo', batch, 1)).toBe(false);
    expect(proximalApart('ppo', { ...batch, behavLogp: undefined }, 2)).toBe(false);
    trainer.dispose();
  });

  it('decoupled and standard PPO agree on-policy and differ when π_behav lags π_prox', async () => {
    const pgLoss = async (loss: TrainerConfig['loss'], lag: number) => {
      const trainer = new PolicyTrainer(args, config(loss));
      const m = await ppoUpdate(trainer, rlBatch(trainer, lag), { updates: 1 });
      trainer.dispose();
      return m;
    };
    const [ppo0, dec0] = [await pgLoss('ppo', 0), await pgLoss('decoupled', 0)];
    expect(dec0.pgLoss).toBeCloseTo(ppo0.pgLoss, 5);
    expect(dec0.wMean).toBeCloseTo(1, 5);
    const [ppo, dec] = [await pgLoss('ppo', 0.5), await pgLoss('decoupled', 0.5)];
    expect(Math.abs(dec.pgLoss - ppo.pgLoss)).toBeGreaterThan(1e-3);
    // w = π_prox / π_behav = e^−0.5 on every other token (capped at 5: none masked).
    expect(dec.wMean).toBeCloseTo((1 + Math.exp(-0.5)) / 2, 3);
    expect(dec.lagKl).toBeGreaterThan(0);
    expect(ppo.wMean).toBe(1);
  });

  it("each epoch's step lowers the loss on a fixed batch, and the update sets the scheduled rate", async () => {
    const trainer = new PolicyTrainer(args, config('decoupled'));
    const batch = rlBatch(trainer, 0.2);
    const steps: StepMetrics[] = [];
    const last = await ppoUpdate(trainer, batch, {
      updates: 4,
      rate: 3e-3,
      onStep: (m) => steps.push(m),
    });
    // Each step's loss is the loss before it: each is below the one before.
    const losses = steps.map((m) => m.loss);
    for (let i = 1; i < losses.length; i++) expect(losses[i]).toBeLessThan(losses[i - 1] ?? -Infinity);
    expect(last).toBe(steps.at(-1));
    expect(last.learningRate).toBe(trainer.optimizer.rate);
    expect(trainer.optimizer.rate).toBeCloseTo(3e-3, 12);
    trainer.dispose();
  });

  it('leaves no tensor behind, and none when a step throws', async () => {
    const trainer = new PolicyTrainer(args, config('decoupled'));
    const batch = rlBatch(trainer, 0.3);
    await ppoUpdate(trainer, batch, { updates: 2 }); // Adam's moments exist from here
    const before = tf.memory().numTensors;
    await ppoUpdate(trainer, batch, { updates: 3 });
    expect(tf.memory().numTensors).toBe(before);
    const poisoned = { ...batch, advantages: batch.advantages.map(() => NaN) };
    await expect(ppoUpdate(trainer, poisoned, { updates: 3 })).rejects.toThrow(/the loss is NaN/);
    expect(tf.memory().numTensors).toBe(before);
    trainer.dispose();
  });

  it('trains a policy stored before the vocabulary grew on batches of the larger one', async () => {
    const old: ModelArgs = { ...args, vocabSize: VOCAB_SIZE - 2 };
    const b = imitationBatch(4, args.contextLength, 3);
    const n = b.batch * b.length;
    // Every token of the older vocabulary legal; the two newer ones never.
    const narrow = { ...b, legal: new Uint8Array(n * old.vocabSize).fill(1), vocab: old.vocabSize };
    const wide = new Uint8Array(n * VOCAB_SIZE);
    for (let i = 0; i < n; i++) wide.fill(1, i * VOCAB_SIZE, i * VOCAB_SIZE + old.vocabSize);
    const loss = async (batch: TokenBatch) => {
      const trainer = new PolicyTrainer(old, config('pg'));
      const m = await ppoUpdate(trainer, batch, { updates: 1 });
      trainer.dispose();
      return m.pgLoss;
    };
    const a = await loss(narrow);
    expect(Number.isFinite(a)).toBe(true);
    expect(await loss({ ...b, legal: wide, vocab: VOCAB_SIZE })).toBeCloseTo(a, 6);
  });
});

describe('the finite-gradient guard', () => {
  it('a NaN gradient skips the transformer’s step and reports it; weights, Adam state and step count stay', async () => {
    const trainer = new PolicyTrainer(args, config('decoupled'));
    await expectNanStepSkipped(trainer, () => ppoUpdate(trainer, rlBatch(trainer, 0.2), { updates: 2 }));
  });
});
