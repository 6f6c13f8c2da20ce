import * as tf from '@tensorflow/tfjs';

/**
 * `x`'s value as a constant: no gradient flows back into whatever computed it (tfjs has no
 * stop-gradient op). The ops of a custom gradient's forward function are not recorded on the
 * tape, and the one node it records takes `anchor` (a constant input) rather than `x`, so `x`'s
 * ancestors are not on its path.
 */
export function constantOf<T extends tf.Tensor>(x: T, anchor: tf.Tensor): T {
  const f = tf.customGrad(() => ({ value: x.clone(), gradFunc: () => tf.zerosLike(anchor) }));
  return f(anchor) as T;
}

/** Mean of `x` over positions where `mask` is 1. x, mask: [B, T] */
export function maskedMean(x: tf.Tensor, mask: tf.Tensor): tf.Scalar {
  return tf.tidy(() => x.mul(mask).sum().div(mask.sum().maximum(1)) as tf.Scalar);
}

/** Added to the logits of illegal tokens: their probability becomes 0 (exp underflows). */
export const ILLEGAL_LOGIT = -1e9;

/**
 * Log-probability of each taken action and the entropy at each position, both [B, T], under
 * the softmax restricted to the legal tokens when `legal` ([B, T, V], 1 = legal) is given: the
 * same distribution the rollout worker sampled from.
 */
export function actionLogProbs(
  logits: tf.Tensor3D,
  actions: tf.Tensor2D,
  legal?: tf.Tensor3D,
): { logp: tf.Tensor2D; entropy: tf.Tensor2D } {
  return tf.tidy(() => {
    const masked = legal ? logits.add(tf.scalar(1).sub(legal).mul(ILLEGAL_LOGIT)) : logits; // [B, T, V]
    const logpAll = tf.logSoftmax(masked); // [B, T, V]
    const onehot = tf.oneHot(actions, logits.shape[2]).toFloat(); // [B, T, V]
    const logp = logpAll.mul(onehot).sum(-1) as tf.Tensor2D; // [B, T]
    // Illegal tokens have p = 0: their p·log p terms are 0·(−1e9) = 0, not NaN.
    const entropy = logpAll.exp().mul(logpAll).sum(-1).neg() as tf.Tensor2D; // [B, T]
    return { logp, entropy };
  });
}

/** Scales `grads` so that their global L2 norm is at most `maxNorm`; returns the norm before. */
export function clipByGlobalNorm(
  grads: Record<string, tf.Tensor>,
  maxNorm: number,
): { clipped: Record<string, tf.Tensor>; norm: tf.Scalar } {
  return tf.tidy(() => {
    const norm = tf
      .stack(Object.values(grads).map((g) => g.square().sum()))
      .sum()
      .sqrt() as tf.Scalar;
    const scale = tf.minimum(1, tf.div(maxNorm, norm.add(1e-6)));
    const clipped: Record<string, tf.Tensor> = {};
    for (const [k, g] of Object.entries(grads)) clipped[k] = g.mul(scale);
    return { clipped, norm };
  });
}
