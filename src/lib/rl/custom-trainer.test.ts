import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { customBatch } from '../pipeline/custom-workload';
import { DEFAULT_CUSTOM_TRAIN } from './custom-config';
import { MlpLearner } from './custom-trainer';
import { fakeTrajectory as traj } from '../pipeline/custom-fixture';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

describe('the MLP learner of custom environments', () => {
  it('masks steps whose behaviour policy is too far from π_prox (w above the cap), as the decoupled loss does', async () => {
    const learner = new MlpLearner({ inputs: 1, hidden: 4, actions: 2 }, DEFAULT_CUSTOM_TRAIN);
    const snap = await learner.snapshot();
    const logp = (obs: number, a: number) => {
      const w = (i: number, j: number) => snap.w1[i * 4 + j] ?? 0;
      const h = [0, 1, 2, 3].map((j) => Math.tanh(obs * w(0, j) + (snap.b1[j] ?? 0)));
      const z = [0, 1].map((k) => h.reduce((s, x, j) => s + x * (snap.wp[j * 2 + k] ?? 0), snap.bp[k] ?? 0));
      const m = Math.max(...z);
      return (z[a] ?? 0) - m - Math.log(z.reduce((s, x) => s + Math.exp(x - m), 0));
    };
    // Behaviour = the current policy: w = 1 everywhere, nothing masked.
    const fresh = traj(
      [1, 1, 1, 1],
      [0, 1, 2, 3].map((i) => logp(i, i % 2)),
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
      [0, 1, 2, 3].map((i) => logp(i, i % 2) - 3),
    );
    const off = await learner.update(customBatch([stale], 1, 0.9));
    expect(off.wMean).toBeCloseTo(Math.exp(3), 2);
    expect(off.maskedFrac).toBe(1);
    expect(off.pgLoss).toBe(0);
    learner.dispose();
  });
});
