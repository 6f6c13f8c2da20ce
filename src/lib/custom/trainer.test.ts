import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { customBatch } from './workload';
import { mlpLogits, type MlpSnapshot } from '../policy/mlp';
import { DEFAULT_CUSTOM_TRAIN } from './config';
import { MlpLearner } from './trainer';
import { fakeTrajectory as traj } from './fixture';
import { expectNanStepSkipped } from '../rl/update.fakes';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

/** log π(a | [obs]) of a snapshot, as the rollout worker computes it. */
function logpOf(snap: MlpSnapshot, obs: number, a: number): number {
  const z = mlpLogits(snap, [obs]);
  const m = Math.max(...z);
  return (z[a] ?? 0) - m - Math.log(z.reduce((s, x) => s + Math.exp(x - m), 0));
}

describe('the MLP learner of custom environments', () => {
  it('masks steps whose behaviour policy is too far from π_prox (w above the cap), as the decoupled loss does', async () => {
    const learner = new MlpLearner({ inputs: 1, hidden: 4, actions: 2 }, DEFAULT_CUSTOM_TRAIN);
    const snap = await learner.snapshot();
    // Behaviour = the current policy: w = 1 everywhere, nothing masked.
    const fresh = traj(
      [1, 1, 1, 1],
      [0, 1, 2, 3].map((i) => logpOf(snap, i, i % 2)),
    );
    const on = await learner.update(customBatch([fresh], 1, 0.9));
    expect(on.wMean).toBeCloseTo(1, 4);
    expect(on.maskedFrac).toBe(0);
    expect(on.lossKind).toBe('decoupled');
    // Behaviour log-probs 3 nats below π_prox: w = e³ ≈ 20 > 5, every step masked, no policy loss.
    const snap2 = await learner.snapshot();
    Object.assign(snap, snap2);
    const stale = traj(
      [1, 1, 1, 1],
      [0, 1, 2, 3].map((i) => logpOf(snap, i, i % 2) - 3),
    );
    const off = await learner.update(customBatch([stale], 1, 0.9));
    expect(off.wMean).toBeCloseTo(Math.exp(3), 2);
    expect(off.maskedFrac).toBe(1);
    expect(off.pgLoss).toBe(0);
    learner.dispose();
  });

  it("weighs each step's policy-gradient term by w = π_prox/π_behav", async () => {
    // The same fresh learner, the same episode; only the behaviour log-prob of step 0 differs.
    const pgLossWith = async (w0: number) => {
      const learner = new MlpLearner({ inputs: 1, hidden: 4, actions: 2 }, DEFAULT_CUSTOM_TRAIN);
      const snap = await learner.snapshot();
      const prox = [0, 1, 2, 3].map((i) => logpOf(snap, i, i % 2));
      const behav = prox.map((l, i) => (i === 0 ? l - Math.log(w0) : l));
      const m = await learner.update(customBatch([traj([1, 0, 0, 1], behav)], 1, 0.9));
      learner.dispose();
      return m;
    };
    const [one, two, three] = await Promise.all([1, 2, 3].map(pgLossWith));
    expect(two?.wMean).toBeCloseTo((2 + 1 + 1 + 1) / 4, 4);
    // pgLoss = −mean(w·A): raising w of one step shifts it by −ΔW·A₀/4, linearly in ΔW.
    const d2 = (two?.pgLoss ?? NaN) - (one?.pgLoss ?? NaN);
    const d3 = (three?.pgLoss ?? NaN) - (one?.pgLoss ?? NaN);
    expect(Math.abs(d2)).toBeGreaterThan(1e-3);
    expect(d3).toBeCloseTo(2 * d2, 4);
  });

  it('takes several steps per batch when asked, and the ratio then moves off 1', async () => {
    const learner = new MlpLearner(
      { inputs: 1, hidden: 4, actions: 2 },
      { ...DEFAULT_CUSTOM_TRAIN, updatesPerBatch: 4 },
    );
    const snap = await learner.snapshot();
    const behav = [0, 1, 2, 3].map((i) => logpOf(snap, i, i % 2));
    const m = await learner.update(customBatch([traj([1, 0, 0, 1], behav)], 1, 0.9));
    learner.dispose();
    expect(m.step).toBe(4); // one update of four Adam steps; `step` counts Adam steps, as the transformer's
    expect(m.approxKl).toBeGreaterThan(0); // the last step's π_θ is no longer π_prox
  });

  it('restored from a stored version, goes on exactly as the learner that stored it (weights, Adam, step)', async () => {
    const args = { inputs: 1, hidden: 4, actions: 2 };
    const a = new MlpLearner(args, DEFAULT_CUSTOM_TRAIN);
    const batch = async (l: MlpLearner) => {
      const snap = await l.snapshot();
      const behav = [0, 1, 2, 3].map((i) => logpOf(snap, i, i % 2));
      return customBatch([traj([1, 0, 0, 1], behav)], 1, 0.9);
    };
    await a.update(await batch(a));
    await a.update(await batch(a));
    const b = await MlpLearner.restore(await a.checkpoint(), DEFAULT_CUSTOM_TRAIN);
    const ma = await a.update(await batch(a));
    const mb = await b.update(await batch(b));
    expect(mb.step).toBe(3);
    expect(mb.step).toBe(ma.step);
    const [pa, pb] = [await a.checkpoint(), await b.checkpoint()];
    // Equal up to rounding: Adam's β powers are recomputed from its step count on restore.
    const gap = (x: ArrayBuffer, y: ArrayBuffer) => {
      const [u, v] = [new Float32Array(x), new Float32Array(y)];
      expect(u.length).toBe(v.length);
      return Math.max(...u.map((e, i) => Math.abs(e - (v[i] ?? NaN))));
    };
    expect(gap(pa.params.data, pb.params.data)).toBeLessThan(1e-5);
    // Without Adam's state the same update lands elsewhere: the moments were restored, not reset.
    const c = await MlpLearner.restore(
      { ...(await a.checkpoint()), optimizer: undefined },
      DEFAULT_CUSTOM_TRAIN,
    );
    const d = await MlpLearner.restore(await a.checkpoint(), DEFAULT_CUSTOM_TRAIN);
    await c.update(await batch(c));
    await d.update(await batch(d));
    const [pc, pd] = [await c.checkpoint(), await d.checkpoint()];
    expect(gap(pc.params.data, pd.params.data)).toBeGreaterThan(1e-3);
    // A malformed version is refused, naming the problem.
    await expect(
      MlpLearner.restore(
        { ...pa, params: { ...pa.params, entries: pa.params.entries.slice(1) } },
        DEFAULT_CUSTOM_TRAIN,
      ),
    ).rejects.toThrow(/MLP checkpoint has 5 tensors, the policy 6/);
    for (const l of [a, b, c, d]) l.dispose();
  });
});

describe('the finite-gradient guard of the MLP', () => {
  it('a NaN gradient skips the step and reports it; weights, Adam state and step count stay', async () => {
    const learner = new MlpLearner(
      { inputs: 1, hidden: 4, actions: 2 },
      { ...DEFAULT_CUSTOM_TRAIN, updatesPerBatch: 2 },
    );
    const episode = traj([1, 0, 0, 1], [-0.6, -0.8, -0.7, -0.7]);
    await expectNanStepSkipped(learner, () => learner.update(customBatch([episode], 1, 0.9)));
  });
});
