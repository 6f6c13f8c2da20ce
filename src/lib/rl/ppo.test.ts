import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { decoupledPpoLoss, ppoClipLoss, type PpoParts } from './ppo';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

const t = (rows: number[][]) => tf.tensor2d(rows);
const read = (p: PpoParts) =>
  Object.fromEntries(Object.entries(p).map(([k, v]) => [k, (v as tf.Scalar).dataSync()[0] ?? NaN]));

describe('standard PPO clip loss', () => {
  const eps = 0.2;
  it('matches hand-computed values on both clip sides and both advantage signs', () => {
    // Ratios 1.5, 0.5, 1.1, 0.7 (log-probs relative to behaviour); advantages +1, +1, −2, −2.
    const behav = t([[0, 0, 0, 0]]);
    const logp = t([[Math.log(1.5), Math.log(0.5), Math.log(1.1), Math.log(0.7)]]);
    const adv = t([[1, 1, -2, -2]]);
    const mask = t([[1, 1, 1, 1]]);
    const p = read(ppoClipLoss(logp, behav, adv, mask, eps));
    // token 0: A>0, r=1.5 → min(1.5, 1.2)·1 = 1.2 → L = −1.2 (clipped above)
    // token 1: A>0, r=0.5 → min(0.5, 0.8) = 0.5 → L = −0.5 (no clip below for A>0)
    // token 2: A<0, r=1.1 → min(−2.2, −2.2) = −2.2 → L = 2.2
    // token 3: A<0, r=0.7 → min(−1.4, −1.6) = −1.6 → L = 1.6 (clipped below)
    expect(p.pgLoss).toBeCloseTo((-1.2 - 0.5 + 2.2 + 1.6) / 4, 5);
    expect(p.clipFrac).toBeCloseTo(3 / 4, 5); // 1.5, 0.5, 0.7 are outside [0.8, 1.2]
    const kl = [1.5, 0.5, 1.1, 0.7].map((r) => r - 1 - Math.log(r));
    expect(p.approxKl).toBeCloseTo(kl.reduce((a, b) => a + b) / 4, 5);
    expect(p.wMean).toBe(1);
    expect(p.maskedFrac).toBe(0);
  });

  it('ignores masked positions', () => {
    const p = read(ppoClipLoss(t([[0, Math.log(3)]]), t([[0, 0]]), t([[1, 100]]), t([[1, 0]]), eps));
    expect(p.pgLoss).toBeCloseTo(-1, 6);
    expect(p.clipFrac).toBe(0);
  });

  it('has the policy-gradient gradient inside the clip range and none outside it', () => {
    const behav = t([[0, 0]]);
    const adv = t([[1, 1]]);
    const mask = t([[1, 1]]);
    const g = tf.grad((lp: tf.Tensor) => ppoClipLoss(lp as tf.Tensor2D, behav, adv, mask, eps).pgLoss)(
      t([[Math.log(1.1), Math.log(1.5)]]),
    );
    const [inside = NaN, outside = NaN] = g.dataSync();
    expect(inside).toBeCloseTo((-1.1 * 1) / 2, 5); // d(−r·A/2)/dlogp = −r·A/2
    expect(outside).toBeCloseTo(0, 6);
  });
});

describe('decoupled PPO loss', () => {
  const eps = 0.2;
  it('weights each token by w = π_prox / π_behav and clips r = π_θ / π_prox', () => {
    // prox/behav = 2 and 0.5; θ/prox = 1.5 and 1.0; A = +1, −1.
    const behav = t([[0, 0]]);
    const prox = t([[Math.log(2), Math.log(0.5)]]);
    const logp = t([[Math.log(2) + Math.log(1.5), Math.log(0.5)]]);
    const p = read(decoupledPpoLoss(logp, prox, behav, t([[1, -1]]), t([[1, 1]]), eps, 5));
    // token 0: w=2, r=1.5, A=1 → −2·min(1.5, 1.2) = −2.4; token 1: w=0.5, r=1, A=−1 → −0.5·(−1) = 0.5
    expect(p.pgLoss).toBeCloseTo((-2.4 + 0.5) / 2, 5);
    expect(p.wMean).toBeCloseTo(1.25, 5);
    expect(p.wMax).toBeCloseTo(2, 5);
    expect(p.clipFrac).toBeCloseTo(0.5, 5);
    expect(p.maskedFrac).toBe(0);
  });

  it('masks tokens whose w exceeds the cap', () => {
    // w = 10 (masked with cap 5) and w = 1.
    const behav = t([[0, 0, 0]]);
    const prox = t([[Math.log(10), 0, 0]]);
    const logp = t([[Math.log(10), Math.log(1.1), 0]]);
    const p = read(decoupledPpoLoss(logp, prox, behav, t([[1, 1, 5]]), t([[1, 1, 0]]), eps, 5));
    expect(p.maskedFrac).toBeCloseTo(0.5, 6); // one of the two policy tokens
    expect(p.pgLoss).toBeCloseTo(-1.1, 5); // only token 1 counts: −1·min(1.1, 1.1)
    expect(p.wMax).toBeCloseTo(10, 4);
  });

  it('stays finite when a masked token was sampled at a vanishing probability (w beyond float32)', () => {
    // log π_prox − log π_behav = 100: w = e^100 overflows float32. The cap masks the token, and
    // neither the loss nor its gradient may turn NaN (∞·0) because of it.
    const behav = t([[-100, 0]]);
    const prox = t([[0, 0]]);
    const adv = t([[1, 1]]);
    const mask = t([[1, 1]]);
    const loss = (lp: tf.Tensor) =>
      decoupledPpoLoss(lp as tf.Tensor2D, prox, behav, adv, mask, eps, 5).pgLoss;
    const logp = t([[0, Math.log(1.1)]]);
    const p = read(decoupledPpoLoss(logp, prox, behav, adv, mask, eps, 5));
    expect(p.pgLoss).toBeCloseTo(-1.1, 5); // token 1 alone
    expect(p.maskedFrac).toBeCloseTo(0.5, 6);
    expect(Number.isFinite(p.wMax)).toBe(true);
    const [masked = NaN, kept = NaN] = tf.grad(loss)(logp).dataSync();
    expect(masked).toBeCloseTo(0, 9);
    expect(kept).toBeCloseTo(-1.1, 5); // d(−r·A)/dlogp = −r·A over the one kept token
  });

  it('measures lag as the mean of w − 1 − log w, where mean w stays at 1', () => {
    // Tokens with w = 2, 0.5 and 1: each w − 1 − log w ≥ 0, zero only at w = 1.
    const behav = t([[0, 0, 0]]);
    const prox = t([[Math.log(2), Math.log(0.5), 0]]);
    const p = read(decoupledPpoLoss(prox, prox, behav, t([[1, 1, 1]]), t([[1, 1, 1]]), eps, 5));
    const k3 = (w: number) => w - 1 - Math.log(w);
    expect(p.lagKl).toBeCloseTo((k3(2) + k3(0.5) + k3(1)) / 3, 5);
    expect(p.lagKl).toBeGreaterThan(0.1);
    // On-policy: no lag at all.
    const on = read(decoupledPpoLoss(behav, behav, behav, t([[1, 1, 1]]), t([[1, 1, 1]]), eps, 5));
    expect(on.lagKl).toBeCloseTo(0, 6);
  });

  it('takes its diagnostics over the sampled tokens only, the loss over every policy token', () => {
    // Token 0 sampled (w = 3, r = 1.5); token 1 relabelled (its π_behav a stand-in: w = 1, r = 1).
    const behav = t([[0, 0]]);
    const prox = t([[Math.log(3), 0]]);
    const logp = t([[Math.log(3) + Math.log(1.5), 0]]);
    const adv = t([[1, 1]]);
    const mask = t([[1, 1]]);
    const all = read(decoupledPpoLoss(logp, prox, behav, adv, mask, eps, 5));
    const some = read(decoupledPpoLoss(logp, prox, behav, adv, mask, eps, 5, t([[1, 0]])));
    expect(some.pgLoss).toBeCloseTo(all.pgLoss ?? NaN, 6); // (−3·1.2 − 1) / 2 in both
    expect(all.clipFrac).toBeCloseTo(0.5, 6);
    expect(some.clipFrac).toBeCloseTo(1, 6);
    expect(all.wMean).toBeCloseTo(2, 5);
    expect(some.wMean).toBeCloseTo(3, 5);
    expect(some.lagKl).toBeCloseTo(3 - 1 - Math.log(3), 5);
    const ppo = read(ppoClipLoss(logp, behav, adv, mask, eps, t([[1, 0]])));
    expect(ppo.clipFrac).toBeCloseTo(1, 6); // r = 4.5 on the sampled token
    expect(ppo.lagKl).toBe(0);
  });

  it('equals standard PPO when the proximal policy is the behaviour policy', () => {
    const behav = t([[-1, -2, -0.5]]);
    const logp = t([[-0.7, -2.5, -0.5]]);
    const adv = t([[0.3, -1, 2]]);
    const mask = t([[1, 1, 1]]);
    const a = read(ppoClipLoss(logp, behav, adv, mask, eps));
    const b = read(decoupledPpoLoss(logp, behav, behav, adv, mask, eps, 5));
    expect(b.pgLoss).toBeCloseTo(a.pgLoss ?? NaN, 6);
    expect(b.clipFrac).toBeCloseTo(a.clipFrac ?? NaN, 6);
  });
});
