import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { gelu, layerNorm } from './ops';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

/** The largest absolute difference between two tensors of one shape. */
function maxDiff(a: tf.Tensor, b: tf.Tensor): number {
  expect(a.shape).toEqual(b.shape);
  return tf.tidy(() => tf.max(tf.abs(a.sub(b))).dataSync()[0] ?? Infinity);
}

/** What the ops replace: tfjs's own gradients through the ops that compute them. */
const reference = {
  layerNorm(x: tf.Tensor3D, g: tf.Tensor, b: tf.Tensor): tf.Tensor {
    const { mean, variance } = tf.moments(x, -1, true); // [B, T, 1] each
    return x.sub(mean).div(variance.add(1e-5).sqrt()).mul(g).add(b); // [B, T, D]
  },
  gelu(x: tf.Tensor): tf.Tensor {
    return x.mul(tf.sigmoid(x.mul(1.702))); // [B, T, M]
  },
};

describe('ops with written-out gradients', () => {
  it('layerNorm has the value and the x, gain and bias gradients of the composed ops, and keeps no tensors', () => {
    const x = tf.randomNormal([3, 4, 6], 0.5, 2, 'float32', 1) as tf.Tensor3D; // [B, T, D]
    const g = tf.randomNormal([6], 1, 0.5, 'float32', 2); // [D]
    const b = tf.randomNormal([6], 0, 0.5, 'float32', 3); // [D]
    const probe = tf.randomNormal([3, 4, 6], 0, 1, 'float32', 4); // [B, T, D]: a non-uniform dy
    const loss = (f: (x: tf.Tensor3D, g: tf.Tensor, b: tf.Tensor) => tf.Tensor) =>
      tf.grads((a: tf.Tensor, c: tf.Tensor, d: tf.Tensor) =>
        f(a as tf.Tensor3D, c, d)
          .mul(probe)
          .sum(),
      );
    const before = tf.memory().numTensors;
    const ours = loss(layerNorm)([x, g, b]);
    expect(tf.memory().numTensors - before).toBe(3); // the three gradients
    const theirs = loss(reference.layerNorm)([x, g, b]);
    const value = layerNorm(x, g, b);
    const expected = reference.layerNorm(x, g, b);
    expect(maxDiff(value, expected)).toBeLessThan(1e-5);
    for (let i = 0; i < 3; i++) {
      expect(maxDiff(ours[i] as tf.Tensor, theirs[i] as tf.Tensor)).toBeLessThan(1e-4);
      expect(tf.max(tf.abs(theirs[i] as tf.Tensor)).dataSync()[0]).toBeGreaterThan(0.1); // worth comparing
    }
    tf.dispose([x, g, b, probe, value, expected, ...ours, ...theirs]);
  });

  it('gelu has the value and gradient of x·σ(1.702x), and keeps no tensors', () => {
    const x = tf.randomNormal([2, 5, 7], 0, 3, 'float32', 5) as tf.Tensor3D; // [B, T, M]
    const probe = tf.randomNormal([2, 5, 7], 0, 1, 'float32', 6);
    const before = tf.memory().numTensors;
    const ours = tf.grad((a: tf.Tensor) =>
      gelu(a as tf.Tensor3D)
        .mul(probe)
        .sum(),
    )(x);
    expect(tf.memory().numTensors - before).toBe(1);
    const theirs = tf.grad((a: tf.Tensor) => reference.gelu(a).mul(probe).sum())(x);
    const value = gelu(x);
    const expected = reference.gelu(x);
    expect(maxDiff(value, expected)).toBeLessThan(1e-6);
    expect(maxDiff(ours, theirs)).toBeLessThan(1e-5);
    expect(tf.max(tf.abs(theirs)).dataSync()[0]).toBeGreaterThan(0.1);
    tf.dispose([x, probe, value, expected, ours, theirs]);
  });
});
