import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { RateAdam } from './trainer';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

/** One Adam step on f(x) = (x − 5)²; returns how far x moved. */
function step(opt: RateAdam, x: tf.Variable): number {
  const before = x.dataSync()[0] ?? NaN;
  opt.minimize(() => x.sub(5).square().sum() as tf.Scalar);
  return (x.dataSync()[0] ?? NaN) - before;
}

describe('RateAdam', () => {
  it('takes the new rate at the next step and keeps its moments and step count', async () => {
    const x = tf.variable(tf.scalar(0));
    const y = tf.variable(tf.scalar(0));
    const changed = new RateAdam(0.1);
    const kept = new RateAdam(0.1);
    step(changed, x);
    step(kept, y);
    changed.rate = 0.01;
    expect(changed.rate).toBe(0.01);
    // Same moments, a tenth of the rate: a tenth of the step.
    const small = step(changed, x);
    const big = step(kept, y);
    expect(small / big).toBeCloseTo(0.1, 6);
    const [iter] = await changed.getWeights();
    expect(iter?.tensor.dataSync()[0]).toBe(2);
    iter?.tensor.dispose();
    expect(() => (changed.rate = 0)).toThrow(/positive number/);
    changed.dispose();
    kept.dispose();
    tf.dispose([x, y]);
  });
});
