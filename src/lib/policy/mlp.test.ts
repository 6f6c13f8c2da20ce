import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { initMlp, mlpForward } from './mlp';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

describe('the MLP policy of custom environments', () => {
  it('gives logits and values of the right shapes, and frees every tensor it made once disposed', () => {
    const before = tf.memory().numTensors;
    const params = initMlp({ inputs: 4, hidden: 8, actions: 3 }, 1);
    const obs = tf.ones([5, 4]) as tf.Tensor2D; // [5, 4]
    const { logits, values } = mlpForward(params, obs);
    expect(logits.shape).toEqual([5, 3]);
    expect(values.shape).toEqual([5]);
    tf.dispose([obs, logits, values, ...params.values()]);
    expect(tf.memory().numTensors).toBe(before);
  });
});
