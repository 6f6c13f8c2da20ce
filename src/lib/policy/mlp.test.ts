import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { initMlp, mlpCheckpoint, mlpForward, mlpLogits, snapshotFromCheckpoint, type MlpArgs } from './mlp';

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

  it('stores every parameter in a checkpoint that acts as the policy did, and refuses one that does not fit', async () => {
    const args: MlpArgs = { inputs: 4, hidden: 8, actions: 3 };
    const params = initMlp(args, 7);
    const ckpt = await mlpCheckpoint(params, args, 5);
    expect(ckpt.params.entries.map((e) => e.name)).toEqual(['w1', 'b1', 'wp', 'bp', 'wv', 'bv']);
    expect(ckpt.step).toBe(5);
    const obs = [0.1, -0.4, 0.3, 0.9];
    const want = tf.tidy(() => Array.from(mlpForward(params, tf.tensor2d([obs])).logits.dataSync()));
    const got = mlpLogits(snapshotFromCheckpoint(ckpt), obs);
    got.forEach((v, i) => expect(v).toBeCloseTo(want[i] ?? NaN, 5));
    tf.dispose([...params.values()]);
    expect(() => snapshotFromCheckpoint({ ...ckpt, mlp: { ...args, hidden: 9 } })).toThrow(
      'MLP parameter w1 has shape [4,8], the policy needs [4,9]',
    );
    expect(() =>
      snapshotFromCheckpoint({ ...ckpt, params: { ...ckpt.params, entries: ckpt.params.entries.slice(1) } }),
    ).toThrow('MLP checkpoint has 5 tensors, the policy 6');
  });
});
