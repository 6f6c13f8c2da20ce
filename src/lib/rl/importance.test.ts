import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { GradientImportance, importanceRecord, seedImportance, seedImportanceOf } from './importance';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

describe("the seed's importance", () => {
  it('is 0.4·variance + 0.3·mean|w| + 0.3·‖w‖ of a known tensor', () => {
    // [1, 2, 3, 4]: variance 1.25, mean |w| 2.5, ‖w‖ √30.
    expect(seedImportanceOf([1, 2, 3, 4])).toBeCloseTo(0.4 * 1.25 + 0.3 * 2.5 + 0.3 * Math.sqrt(30), 12);
    // [−2, 2]: variance 4, mean |w| 2, ‖w‖ √8.
    expect(seedImportanceOf([-2, 2])).toBeCloseTo(1.6 + 0.6 + 0.3 * Math.sqrt(8), 12);
    expect(seedImportanceOf([0, 0, 0])).toBe(0);
  });

  it('computed on the backend, matches the formula and is normalised by the largest', async () => {
    const tensors = new Map<string, tf.Tensor>([
      ['a', tf.tensor2d([1, 2, 3, 4], [2, 2])],
      ['zero', tf.zeros([4])],
      ['b', tf.tensor1d([-2, 2])],
    ]);
    const imp = await seedImportance(tensors);
    const a = 0.4 * 1.25 + 0.3 * 2.5 + 0.3 * Math.sqrt(30);
    const b = 1.6 + 0.6 + 0.3 * Math.sqrt(8);
    expect([...imp.keys()]).toEqual(['a', 'zero', 'b']);
    expect(imp.get('b')).toBeCloseTo(1, 6);
    expect(imp.get('a')).toBeCloseTo(a / b, 6);
    expect(imp.get('zero')).toBe(0);
    expect(importanceRecord(imp)).toEqual({ a: Math.round((a / b) * 1e4) / 1e4, zero: 0, b: 1 });
    tf.dispose([...tensors.values()]);
  });
});

describe('the gradient-based importance', () => {
  it('is the running mean of |Σ g·w| per tensor, normalised, and restarts after a read', async () => {
    const gi = new GradientImportance();
    expect(gi.latest()).toBeNull();
    const w = new Map<string, tf.Tensor>([
      ['a', tf.tensor1d([3, 1])],
      ['b', tf.tensor1d([-2])],
    ]);
    const step = (ga: number[], gb: number[]) => {
      const g = new Map<string, tf.Tensor>([
        ['a', tf.tensor1d(ga)],
        ['b', tf.tensor1d(gb)],
      ]);
      gi.observe(g, w);
      tf.dispose([...g.values()]);
    };
    const before = tf.memory().numTensors;
    step([1, -2], [2]); // a: |3 − 2| = 1, b: |−4| = 4
    step([0, 1], [1]); // a: 1, b: |−2| = 2
    expect(gi.size).toBe(2);
    const imp = await gi.read(); // means a 1, b 3
    expect(imp.get('b')).toBeCloseTo(1, 6);
    expect(imp.get('a')).toBeCloseTo(1 / 3, 6);
    expect(gi.size).toBe(0);
    expect(tf.memory().numTensors).toBe(before);
    expect((await gi.read()).size).toBe(0);
    // A tensor left out of the next window keeps its last mean in `latest`.
    expect(gi.latest()?.get('a')).toBeCloseTo(1 / 3, 6);
    const ga = new Map<string, tf.Tensor>([['a', tf.tensor1d([4, 0])]]); // a: 12
    gi.observe(ga, w);
    tf.dispose([...ga.values()]);
    expect([...(await gi.read()).keys()]).toEqual(['a']);
    const latest = gi.latest();
    expect(latest?.get('a')).toBeCloseTo(1, 6);
    expect(latest?.get('b')).toBeCloseTo(3 / 12, 6);
    gi.dispose();
    tf.dispose([...w.values()]);
  });
});
