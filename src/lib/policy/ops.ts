import * as tf from '@tensorflow/tfjs';

/**
 * Layer norm over the last axis with its gradient written out (the formulas below), rather than
 * tfjs's gradient of every op that computes it: fewer kernels, and the gains' and biases'
 * gradients (sums over the [B, T] positions) as products with a row of ones, where tfjs sums a
 * broadcast's gradient by transposing dy first (slow on wasm). With x̂ = (x − μ)/σ and
 * σ = √(var + 1e-5): dx = (ĝ − mean(ĝ) − x̂·mean(ĝ·x̂)) / σ for ĝ = dy·g; dg = Σ dy·x̂; db = Σ dy.
 */
const layerNormOp = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const [x, g, b, save] = args as [tf.Tensor3D, tf.Tensor1D, tf.Tensor1D, tf.GradSaveFunc];
  const [B, T, D] = x.shape;
  const xc = x.sub(x.mean(-1, true)); // [B, T, D]
  const inv = xc.square().mean(-1, true).add(1e-5).rsqrt(); // [B, T, 1]: 1/σ
  const xhat = xc.mul(inv) as tf.Tensor3D; // [B, T, D]
  save([xhat, inv, g]);
  return {
    value: xhat.mul(g).add(b) as tf.Tensor3D, // [B, T, D]
    gradFunc: (dy: tf.Tensor3D, saved: tf.Tensor[]) => {
      const [sxhat, sinv, sg] = saved as [tf.Tensor3D, tf.Tensor3D, tf.Tensor1D];
      const ones = tf.ones([1, B * T]); // [1, B·T]
      const dg = tf.matMul(ones, dy.mul(sxhat).reshape([B * T, D])).reshape([D]); // [D]
      const db = tf.matMul(ones, dy.reshape([B * T, D])).reshape([D]); // [D]
      const ghat = dy.mul(sg); // [B, T, D]
      const dx = ghat
        .sub(ghat.mean(-1, true))
        .sub(sxhat.mul(ghat.mul(sxhat).mean(-1, true)))
        .mul(sinv); // [B, T, D]
      return [dx, dg, db];
    },
  };
});

/** Layer norm of x [B, T, D] over its last axis, with gain g [D] and bias b [D]. */
export function layerNorm(x: tf.Tensor3D, g: tf.Tensor, b: tf.Tensor): tf.Tensor3D {
  return layerNormOp(x, g as tf.Tensor1D, b as tf.Tensor1D) as tf.Tensor3D;
}

/** GELU's slope in the sigmoid approximation x·σ(1.702x). */
const GELU_K = 1.702;

/**
 * GELU, sigmoid approximation x·σ(kx) with k = 1.702 (one fused-friendly op on every backend),
 * with its gradient written out: d/dx x·σ(kx) = σ·(1 + k·x·(1 − σ)).
 */
const geluOp = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const [x, save] = args as [tf.Tensor3D, tf.GradSaveFunc];
  const s = tf.sigmoid(x.mul(GELU_K)); // [B, T, M]
  save([x, s]);
  return {
    value: x.mul(s) as tf.Tensor3D, // [B, T, M]
    gradFunc: (dy: tf.Tensor3D, saved: tf.Tensor[]) => {
      const [sx, ss] = saved as [tf.Tensor3D, tf.Tensor3D];
      return dy.mul(ss.mul(sx.mul(GELU_K).mul(tf.sub(1, ss)).add(1))); // [B, T, M]
    },
  };
});

/** GELU of x [B, T, M], elementwise. */
export function gelu(x: tf.Tensor3D): tf.Tensor3D {
  return geluOp(x) as tf.Tensor3D;
}
