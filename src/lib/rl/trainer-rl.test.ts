import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ENV_CONFIG } from '../env/config';
import { runEpisodes } from '../env/evaluate';
import { generateTasks } from '../env/families';
import { rlooAdvantages } from './advantages';
import { validateBatch } from './batch';
import { trajectoryBatch, TrajectoryRecorder } from './trajectory';
import type { QuickJSSandbox } from '../sandbox/quickjs';
import { createNodeQuickJS } from '../sandbox/quickjs-node';
import { DEFAULT_MODEL_ARGS, type ModelArgs } from '../policy/config';
import { DEFAULT_SAMPLER, PolicyAgent } from '../policy/sampler';
import { constantOf, PolicyTrainer } from './trainer';
import { DEFAULT_TRAINER_CONFIG } from './learner-config';

const args: ModelArgs = { ...DEFAULT_MODEL_ARGS, contextLength: 32, dModel: 16, nHeads: 2, dMlp: 32 };
const env = { ...DEFAULT_ENV_CONFIG, contextLength: 32, maxTurns: 1, maxTokensPerTurn: 6 };

let sandbox: QuickJSSandbox;
beforeAll(async () => {
  await tf.setBackend('cpu');
  sandbox = await createNodeQuickJS();
});
afterAll(() => sandbox.dispose());

/** Collects a batch of real episodes with the trainer's own weights (on-policy). */
async function onPolicyBatch(trainer: PolicyTrainer) {
  const tasks = generateTasks(1)
    .filter((t) => t.level === 'easy')
    .slice(0, 3)
    .flatMap((t) => [t, t]);
  const agent = new PolicyAgent('policy', trainer.params, args, {
    ...DEFAULT_SAMPLER,
    rows: tasks.length,
    seed: 4,
  });
  const rec = new TrajectoryRecorder(0);
  const eps = await runEpisodes(tasks, agent, sandbox, env, rec.onToken);
  const trajs = eps.map((e) => rec.trajectory(e, e.task.id));
  const adv = rlooAdvantages(
    trajs.map((t) => t.return),
    trajs.map((t) => t.group),
  );
  // Make sure the batch has a learning signal even if every return tied.
  return trajectoryBatch(
    trajs,
    adv.map((a, i) => a + (i % 2 ? 0.5 : -0.5)),
    args.contextLength,
  );
}

describe('the trainer on RL batches', () => {
  it('recomputes π_prox equal to the behaviour log-probs the sampler recorded (same weights, same mask)', async () => {
    const trainer = new PolicyTrainer(args, { ...DEFAULT_TRAINER_CONFIG, loss: 'decoupled' });
    const batch = await onPolicyBatch(trainer);
    const m = await trainer.trainStep(batch);
    expect(m.lossKind).toBe('decoupled');
    // On-policy and before the update: w = π_prox/π_behav = 1 and r = 1 on every token.
    expect(m.wMean).toBeCloseTo(1, 4);
    expect(m.wMax).toBeCloseTo(1, 3);
    expect(m.maskedFrac).toBe(0);
    expect(m.clipFrac).toBe(0);
    expect(Math.abs(m.approxKl)).toBeLessThan(1e-5);
    expect(Number.isFinite(m.loss) && Number.isFinite(m.gradNorm)).toBe(true);
    trainer.dispose();
  }, 60_000);

  it("prioritized replay's importance weights scale the value loss (the advantages carry them for the policy loss)", async () => {
    // Three copies with the same initial weights, one step each on the same batch.
    const [a, b, c] = [0, 1, 2].map(
      () => new PolicyTrainer(args, { ...DEFAULT_TRAINER_CONFIG, loss: 'decoupled' }),
    );
    if (!a || !b || !c) throw new Error('no trainer');
    const batch = await onPolicyBatch(a);
    const n = batch.batch * batch.length;
    const plain = await a.trainStep(batch);
    // Uniform weights 0.5 halve the value loss and leave the policy loss alone.
    const half = await b.trainStep({ ...batch, weights: new Float32Array(n).fill(0.5) });
    expect(half.valueLoss).toBeCloseTo(plain.valueLoss / 2, 5);
    expect(half.pgLoss).toBeCloseTo(plain.pgLoss, 6);
    // Row 0 weighing 0 drops its share.
    const dropped = await c.trainStep({
      ...batch,
      weights: new Float32Array(n).fill(1).fill(0, 0, batch.length),
    });
    expect(dropped.valueLoss).toBeLessThan(plain.valueLoss);
    expect(() => validateBatch({ ...batch, weights: new Float32Array(3) })).toThrow(
      /batch.weights has 3 entries/,
    );
    for (const t of [a, b, c]) t.dispose();
  }, 60_000);

  it('PPO epochs on one batch move the ratio away from 1 and report KL and clipping', async () => {
    const trainer = new PolicyTrainer(args, { ...DEFAULT_TRAINER_CONFIG, loss: 'ppo', learningRate: 3e-2 });
    const batch = await onPolicyBatch(trainer);
    const first = await trainer.trainStep(batch);
    let last = first;
    for (let i = 0; i < 4; i++) last = await trainer.trainStep(batch);
    expect(first.approxKl).toBeLessThan(1e-5);
    expect(last.approxKl).toBeGreaterThan(first.approxKl);
    expect(last.clipFrac).toBeGreaterThanOrEqual(0);
    expect(last.wMean).toBe(1); // standard PPO has no behaviour weight
    trainer.dispose();
  }, 60_000);

  it("decoupled PPO: π_prox fixed before a batch's epochs lets r leave 1 and the clip act; recomputed each step it would not", async () => {
    const trainer = new PolicyTrainer(args, {
      ...DEFAULT_TRAINER_CONFIG,
      loss: 'decoupled',
      learningRate: 3e-2,
    });
    const batch = await onPolicyBatch(trainer);
    const prox = trainer.proximalLogProbs(batch);
    const first = await trainer.trainStep(batch, prox);
    let last = first;
    for (let i = 0; i < 4; i++) last = await trainer.trainStep(batch, prox);
    prox.dispose();
    expect(first.approxKl).toBeLessThan(1e-5);
    expect(last.approxKl).toBeGreaterThan(1e-4);
    expect(last.clipFrac).toBeGreaterThan(0);
    // Recomputed at every step, π_prox follows π_θ: the ratio is 1 again at each step.
    const again = await trainer.trainStep(batch);
    expect(Math.abs(again.approxKl)).toBeLessThan(1e-5);
    expect(again.clipFrac).toBe(0);
    trainer.dispose();
  }, 60_000);

  it.each([false, true])(
    'π_prox from the step’s own forward pass trains exactly as from a separate pass (relabelled rows: %s)',
    async (relabelled) => {
      const a = new PolicyTrainer(args, { ...DEFAULT_TRAINER_CONFIG, loss: 'decoupled', learningRate: 3e-2 });
      const b = new PolicyTrainer(args, { ...DEFAULT_TRAINER_CONFIG, loss: 'decoupled', learningRate: 3e-2 });
      const onPolicy = await onPolicyBatch(a);
      // Off-policy behaviour log-probs, so that w ≠ 1 and some tokens pass the cap.
      const behavLogp = onPolicy.behavLogp?.map((v, i) =>
        relabelled && i % 7 === 0 ? NaN : v + (i % 3 === 0 ? -2 : 0.3),
      );
      const batch = { ...onPolicy, behavLogp };
      let before = 0; // after the first step, which creates Adam's moments
      for (let step = 0; step < 3; step++) {
        if (step === 1) before = tf.memory().numTensors;
        const prox = a.proximalLogProbs(batch);
        const ma = await a.trainStep(batch, prox);
        prox.dispose();
        const mb = await b.trainStep(batch);
        for (const k of ['loss', 'gradNorm', 'wMean', 'wMax', 'maskedFrac', 'entropy'] as const)
          expect(mb[k]).toBeCloseTo(ma[k], 5);
        if (!relabelled) expect(ma.maskedFrac).toBeGreaterThan(0);
      }
      const fa = await a.fingerprint();
      const fb = await b.fingerprint();
      fb.forEach((v, i) => expect(v).toBeCloseTo(fa[i] ?? NaN, 4));
      expect(tf.memory().numTensors).toBe(before);
      a.dispose();
      b.dispose();
    },
    60_000,
  );

  it('constantOf passes the value and stops the gradient', () => {
    const x = tf.tensor1d([1, 2, 3]);
    // d/dx Σ x · c(x) = c(x) = x, where without the stop it would be 2x.
    const g = tf.grad((v: tf.Tensor) => v.mul(constantOf(v, tf.zerosLike(v))).sum())(x);
    expect(Array.from(g.dataSync())).toEqual([1, 2, 3]);
    tf.dispose([x, g]);
  });

  it.each(['ppo', 'decoupled'] as const)(
    '%s: relabelled tokens (NaN behaviour log-prob) train with π_prox as π_behav (w = 1)',
    async (loss) => {
      const a = new PolicyTrainer(args, { ...DEFAULT_TRAINER_CONFIG, loss });
      const b = new PolicyTrainer(args, { ...DEFAULT_TRAINER_CONFIG, loss });
      const batch = await onPolicyBatch(a);
      // On-policy, π_behav = π_prox: the same batch with the first row's behaviour log-probs unknown
      // trains the same (the diagnostics then count the other rows' tokens).
      const unknown = {
        ...batch,
        behavLogp: batch.behavLogp?.map((v, i) => (batch.mask[i] && i < batch.length ? NaN : v)),
      };
      expect(unknown.behavLogp?.some(Number.isNaN)).toBe(true);
      const ma = await a.trainStep(batch);
      const mb = await b.trainStep(unknown);
      expect(Number.isFinite(mb.loss) && Number.isFinite(mb.gradNorm)).toBe(true);
      expect(mb.loss).toBeCloseTo(ma.loss, 4);
      expect(mb.gradNorm).toBeCloseTo(ma.gradNorm, 3);
      expect(mb.wMean).toBeCloseTo(1, 5);
      // A batch of relabelled rows only has no sampled token: w reads 1, not 0.
      const c = new PolicyTrainer(args, { ...DEFAULT_TRAINER_CONFIG, loss });
      const all = { ...batch, behavLogp: batch.behavLogp?.map((v, i) => (batch.mask[i] ? NaN : v)) };
      const mc = await c.trainStep(all);
      expect(mc.wMean).toBe(1);
      expect(mc.wMax).toBe(1);
      expect(mc.lagKl).toBe(0);
      a.dispose();
      b.dispose();
      c.dispose();
    },
    60_000,
  );

  it('takes w and the lag over the sampled rows only, not the relabelled ones', async () => {
    const trainer = new PolicyTrainer(args, DEFAULT_TRAINER_CONFIG);
    const batch = await onPolicyBatch(trainer);
    // Every sampled token's π_behav 0.5 nats above π_prox: w = e^−0.5 on each; the first row relabelled (w = 1).
    const behavLogp = batch.behavLogp?.map((v, i) => (!batch.mask[i] ? v : i < batch.length ? NaN : v + 0.5));
    const m = await trainer.trainStep({ ...batch, behavLogp });
    expect(m.wMean).toBeCloseTo(Math.exp(-0.5), 4);
    expect(m.wMax).toBeCloseTo(Math.exp(-0.5), 4);
    expect(m.lagKl).toBeCloseTo(Math.exp(-0.5) - 1 + 0.5, 4);
    trainer.dispose();
  }, 60_000);
});
