import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { matMulPlainGrad } from './matmul';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

describe('matMulPlainGrad', () => {
  it('has the value and both gradients of tf.matMul, and keeps no tensors', () => {
    const x = tf.randomNormal([7, 5], 0, 1, 'float32', 1) as tf.Tensor2D; // [R, D]
    const w = tf.randomNormal([5, 3], 0, 1, 'float32', 2) as tf.Tensor2D; // [D, N]
    const probe = tf.randomNormal([7, 3], 0, 1, 'float32', 3); // [R, N]: a non-uniform dy
    const loss = (f: (a: tf.Tensor2D, b: tf.Tensor2D) => tf.Tensor) => (a: tf.Tensor, b: tf.Tensor) =>
      f(a as tf.Tensor2D, b as tf.Tensor2D)
        .mul(probe)
        .sum();
    const before = tf.memory().numTensors;
    const ours = tf.grads(loss(matMulPlainGrad))([x, w]);
    const theirs = tf.grads(loss((a, b) => tf.matMul(a, b)))([x, w]);
    const value = matMulPlainGrad(x, w);
    const expected = tf.matMul(x, w);
    expect(tf.memory().numTensors - before).toBe(6); // the four gradients and two values
    expect(value.shape).toEqual([7, 3]);
    expect(Array.from(value.dataSync())).toEqual(Array.from(expected.dataSync()));
    for (let i = 0; i < 2; i++) {
      const a = ours[i] as tf.Tensor;
      const b = theirs[i] as tf.Tensor;
      expect(a.shape).toEqual(b.shape);
      const diff = tf.max(tf.abs(a.sub(b))).dataSync()[0] ?? Infinity;
      expect(diff).toBeLessThan(1e-5);
      expect(tf.max(tf.abs(b)).dataSync()[0]).toBeGreaterThan(0.1); // a gradient worth comparing
    }
    tf.dispose([x, w, probe, value, expected, ...ours, ...theirs]);
  });
});
