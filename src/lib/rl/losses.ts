import * as tf from '@tensorflow/tfjs';

/** Scalar parts of a policy loss, each a 0-d tensor owned by the caller. */
export interface LossParts {
  /** Total loss minimised: pgLoss + valueCoef·valueLoss − entropyCoef·entropy. */
  loss: tf.Scalar;
  pgLoss: tf.Scalar;
  valueLoss: tf.Scalar;
  entropy: tf.Scalar;
}

/** Mean of `x` over positions where `mask` is 1. x, mask: [B, T] */
export function maskedMean(x: tf.Tensor, mask: tf.Tensor): tf.Scalar {
  return tf.tidy(() => x.mul(mask).sum().div(mask.sum().maximum(1)) as tf.Scalar);
}

/** Log-probability of each taken action and the entropy at each position, both [B, T]. */
export function actionLogProbs(
  logits: tf.Tensor3D,
  actions: tf.Tensor2D,
): { logp: tf.Tensor2D; entropy: tf.Tensor2D } {
  return tf.tidy(() => {
    const logpAll = tf.logSoftmax(logits); // [B, T, V]
    const onehot = tf.oneHot(actions, logits.shape[2]).toFloat(); // [B, T, V]
    const logp = logpAll.mul(onehot).sum(-1) as tf.Tensor2D; // [B, T]
    const entropy = logpAll.exp().mul(logpAll).sum(-1).neg() as tf.Tensor2D; // [B, T]
    return { logp, entropy };
  });
}

/**
 * Vanilla policy-gradient loss (REINFORCE with a baseline in the advantages), masked to the
 * policy's own tokens: −A·log π(a), plus ½(V − R)² and an entropy bonus. The PPO and decoupled
 * PPO losses (issue 5) share this signature.
 */
export function policyGradientLoss(
  logits: tf.Tensor3D, // [B, T, V]
  values: tf.Tensor2D, // [B, T]
  actions: tf.Tensor2D, // [B, T]
  advantages: tf.Tensor2D, // [B, T]
  returns: tf.Tensor2D, // [B, T]
  mask: tf.Tensor2D, // [B, T]
  coef: { valueCoef: number; entropyCoef: number },
): LossParts {
  return tf.tidy(() => {
    const { logp, entropy: ent } = actionLogProbs(logits, actions); // [B, T] each
    const pgLoss = maskedMean(advantages.mul(logp).neg(), mask);
    const valueLoss = maskedMean(values.sub(returns).square().mul(0.5), mask);
    const entropy = maskedMean(ent, mask);
    const loss = pgLoss.add(valueLoss.mul(coef.valueCoef)).sub(entropy.mul(coef.entropyCoef)) as tf.Scalar;
    return { loss, pgLoss, valueLoss, entropy };
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
