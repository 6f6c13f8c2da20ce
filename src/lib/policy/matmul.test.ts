import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { affinePlainGrad, matMulPlainGrad } from './matmul';

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

describe('affinePlainGrad', () => {
  it('has the value and the three gradients of x·w + b, and keeps no tensors', () => {
    const x = tf.randomNormal([7, 5], 0, 1, 'float32', 4) as tf.Tensor2D; // [R, D]
    const w = tf.randomNormal([5, 3], 0, 1, 'float32', 5) as tf.Tensor2D; // [D, N]
    const b = tf.randomNormal([3], 0, 1, 'float32', 6) as tf.Tensor1D; // [N]
    const probe = tf.randomNormal([7, 3], 0, 1, 'float32', 7); // [R, N]: a non-uniform dy
    const before = tf.memory().numTensors;
    const ours = tf.grads((a: tf.Tensor, c: tf.Tensor, d: tf.Tensor) =>
      affinePlainGrad(a as tf.Tensor2D, c as tf.Tensor2D, d as tf.Tensor1D)
        .mul(probe)
        .sum(),
    )([x, w, b]);
    expect(tf.memory().numTensors - before).toBe(3); // the three gradients
    const theirs = tf.grads((a: tf.Tensor, c: tf.Tensor, d: tf.Tensor) =>
      tf
        .matMul(a as tf.Tensor2D, c as tf.Tensor2D)
        .add(d)
        .mul(probe)
        .sum(),
    )([x, w, b]);
    const value = affinePlainGrad(x, w, b);
    const expected = tf.matMul(x, w).add(b);
    expect(Array.from(value.dataSync())).toEqual(Array.from(expected.dataSync()));
    for (let i = 0; i < 3; i++) {
      const a = ours[i] as tf.Tensor;
      const e = theirs[i] as tf.Tensor;
      expect(a.shape).toEqual(e.shape);
      expect(tf.max(tf.abs(a.sub(e))).dataSync()[0]).toBeLessThan(1e-5);
      expect(tf.max(tf.abs(e)).dataSync()[0]).toBeGreaterThan(0.1);
    }
    tf.dispose([x, w, b, probe, value, expected, ...ours, ...theirs]);
  });
});
