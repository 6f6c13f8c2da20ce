import * as tf from '@tensorflow/tfjs';
import { maskedMean } from './losses';

/** Diagnostics of a PPO-style policy loss, each a 0-d tensor owned by the caller. */
export interface PpoParts {
  pgLoss: tf.Scalar;
  /** k3 estimate of KL(π_old ‖ π_θ): mean of (r − 1) − log r over the policy's tokens. */
  approxKl: tf.Scalar;
  /** Fraction of the policy's tokens whose ratio lies outside [1 − ε, 1 + ε]. */
  clipFrac: tf.Scalar;
  /** Mean and max of the behaviour weight w = π_prox / π_behav (1 for standard PPO). */
  wMean: tf.Scalar;
  wMax: tf.Scalar;
  /** Fraction of the policy's tokens masked because w exceeded the cap (0 for standard PPO). */
  maskedFrac: tf.Scalar;
  /**
   * How far the behaviour policy lags the proximal one: k3 estimate of KL(π_behav ‖ π_prox), the
   * mean of w − 1 − log w over the policy's tokens (0 for standard PPO, which has no π_prox). Mean
   * w cannot show lag: over tokens sampled from π_behav its expectation is Σ π_prox = 1 however
   * stale they are.
   */
  lagKl: tf.Scalar;
}

/** −min(r·A, clip(r, 1−ε, 1+ε)·A) per token. r, adv: [B, T] */
function clippedObjective(r: tf.Tensor2D, adv: tf.Tensor2D, eps: number): tf.Tensor2D {
  return tf.minimum(r.mul(adv), r.clipByValue(1 - eps, 1 + eps).mul(adv)).neg() as tf.Tensor2D; // [B, T]
}

/**
 * Standard PPO clip loss (DESIGN §5): r = π_θ / π_behav, L = −min(r·A, clip(r, 1−ε, 1+ε)·A),
 * averaged over the policy's tokens (`mask`). All inputs [B, T]; log-probs are natural logs.
 * The diagnostics (KL, clip fraction) are taken over `sampled` (default `mask`): the tokens a
 * rollout worker sampled, leaving out relabelled ones whose π_behav is only a stand-in.
 */
export function ppoClipLoss(
  logp: tf.Tensor2D,
  behavLogp: tf.Tensor2D,
  advantages: tf.Tensor2D,
  mask: tf.Tensor2D,
  eps: number,
  sampled: tf.Tensor2D = mask,
): PpoParts {
  return tf.tidy(() => {
    const logRatio = logp.sub(behavLogp) as tf.Tensor2D; // [B, T]
    const r = logRatio.exp() as tf.Tensor2D; // [B, T]
    const pgLoss = maskedMean(clippedObjective(r, advantages, eps), mask);
    const approxKl = maskedMean(r.sub(1).sub(logRatio), sampled);
    const clipFrac = maskedMean(r.sub(1).abs().greater(eps).toFloat(), sampled);
    const one = tf.scalar(1);
    return {
      pgLoss,
      approxKl,
      clipFrac,
      wMean: one,
      wMax: one.clone(),
      maskedFrac: tf.scalar(0),
      lagKl: tf.scalar(0),
    };
  });
}

/**
 * log w is clamped here before exp: w = π_prox / π_behav of a token sampled at a probability
 * below ~1e-38 would be +∞ in float32, and ∞·0 = NaN would reach every parameter through the
 * gradient even though the cap masks that token. e^80 is finite and far above any cap.
 */
const LOG_W_MAX = 80;

/**
 * The decoupled PPO loss (AReaL, DESIGN §5): r = π_θ / π_prox, w = π_prox / π_behav,
 * L = −w·min(r·A, clip(r, 1−ε, 1+ε)·A); tokens with w > `cap` are masked out. π_behav is what
 * the rollout worker recorded when it sampled; π_prox is recomputed by the trainer with the
 * weights before the update (a constant here: no gradient flows through it or through w).
 * The loss is the mean over the tokens kept: a masked token does not count at all, so a stale
 * batch's loss keeps its scale (AReaL's reference code divides by every policy token instead,
 * which shrinks the loss by the fraction masked; `maskedFrac` reports that fraction).
 * The diagnostics are taken over `sampled` (default `mask`), as in `ppoClipLoss`.
 */
export function decoupledPpoLoss(
  logp: tf.Tensor2D,
  proxLogp: tf.Tensor2D,
  behavLogp: tf.Tensor2D,
  advantages: tf.Tensor2D,
  mask: tf.Tensor2D,
  eps: number,
  cap: number,
  sampled: tf.Tensor2D = mask,
): PpoParts {
  return tf.tidy(() => {
    const logRatio = logp.sub(proxLogp) as tf.Tensor2D; // [B, T]
    const r = logRatio.exp() as tf.Tensor2D; // [B, T]
    const logW = proxLogp.sub(behavLogp).minimum(LOG_W_MAX) as tf.Tensor2D; // [B, T]
    const w = logW.exp() as tf.Tensor2D; // [B, T]
    const kept = mask.mul(w.lessEqual(cap).toFloat()) as tf.Tensor2D; // [B, T]
    const wKept = w.mul(kept) as tf.Tensor2D; // [B, T]: 0 on masked tokens, never ∞·0
    const pgLoss = maskedMean(wKept.mul(clippedObjective(r, advantages, eps)), kept);
    const keptSampled = kept.mul(sampled) as tf.Tensor2D; // [B, T]
    const approxKl = maskedMean(r.sub(1).sub(logRatio), keptSampled);
    const clipFrac = maskedMean(r.sub(1).abs().greater(eps).toFloat(), keptSampled);
    // No sampled token at all (a batch of relabelled rows only): w is 1 there by construction.
    const none = sampled.sum().equal(0);
    const wMean = tf.where(none, tf.scalar(1), maskedMean(w, sampled)) as tf.Scalar;
    const wMax = tf.where(none, tf.scalar(1), w.mul(sampled).max()) as tf.Scalar;
    const maskedFrac = maskedMean(sampled.sub(keptSampled), sampled);
    // log w clamped below too: a padding position's −∞ would make ∞·0 = NaN in the mean.
    const lagKl = maskedMean(w.sub(1).sub(logW.maximum(-LOG_W_MAX)), sampled);
    return { pgLoss, approxKl, clipFrac, wMean, wMax, maskedFrac, lagKl };
  });
}
