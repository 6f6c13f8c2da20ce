import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_ARGS, type ModelArgs } from './config';
import { countParams, forward, initParams, paramShapes } from './model';

const small: ModelArgs = { ...DEFAULT_MODEL_ARGS, contextLength: 16, dModel: 32, dMlp: 64 };

beforeAll(async () => {
  await tf.setBackend('cpu');
});

describe('policy model', () => {
  it('produces logits [B,T,V] and values [B,T]', () => {
    const params = initParams(small, 1);
    const tokens = tf.zeros([3, 10], 'int32') as tf.Tensor2D;
    const { logits, values } = forward(params, small, tokens);
    expect(logits.shape).toEqual([3, 10, small.vocabSize]);
    expect(values.shape).toEqual([3, 10]);
    tf.dispose([logits, values, tokens, ...params.values()]);
  });

  it('is causal: a later token never changes an earlier position', () => {
    const params = initParams(small, 2);
    const a = tf.tensor2d([[1, 5, 6, 7, 8]], [1, 5], 'int32');
    const b = tf.tensor2d([[1, 5, 6, 9, 2]], [1, 5], 'int32');
    const la = forward(params, small, a).logits.slice([0, 0, 0], [1, 3, -1]).arraySync();
    const lb = forward(params, small, b).logits.slice([0, 0, 0], [1, 3, -1]).arraySync();
    expect(la).toEqual(lb);
    tf.dispose([a, b, ...params.values()]);
  });

  it('with the copy head, gives a normalised distribution that, gated to copying, holds only tokens seen so far', () => {
    const args: ModelArgs = { ...small, pointerDim: 8 };
    const params = initParams(args, 3);
    expect(paramShapes(args).map(([n]) => n)).toEqual(
      expect.arrayContaining(['ptr.wq', 'ptr.wk', 'ptr.gate.w', 'ptr.gate.b']),
    );
    const seq = [1, 5, 6, 7, 5, 8];
    const tokens = tf.tensor2d([seq], [1, seq.length], 'int32');
    // The gate's bias starts at 0 (half copy, half vocabulary): every row is a distribution.
    const mixed = tf.tidy(() =>
      (forward(params, args, tokens).logits.exp().sum(-1) as tf.Tensor2D).arraySync(),
    ); // [1, T]
    for (const s of mixed[0] ?? []) expect(s).toBeCloseTo(1 + args.vocabSize * 1e-6, 4);
    // Gated to copying alone: position t puts all its mass on the tokens of positions 0..t.
    const closed = tf.tensor1d([-30]);
    params.get('ptr.gate.b')?.assign(closed);
    closed.dispose();
    const probs = tf.tidy(() => forward(params, args, tokens).logits.exp().arraySync())[0] ?? []; // [T][V]
    probs.forEach((row, t) => {
      const seen = new Set(seq.slice(0, t + 1));
      const mass = row.reduce((m, p, v) => m + (seen.has(v) ? p : 0), 0);
      expect(mass).toBeCloseTo(1, 3);
      row.forEach((p, v) => !seen.has(v) && expect(p).toBeLessThan(1e-5));
    });
    tf.dispose([tokens, ...params.values()]);
  });

  it('has the parameter count its shapes imply and is deterministic per seed', () => {
    const expected = paramShapes(small).reduce((n, [, s]) => n + s.reduce((x, y) => x * y, 1), 0);
    const p1 = initParams(small, 7);
    const p2 = initParams(small, 7);
    expect(countParams(p1)).toBe(expected);
    expect(p1.get('h0.attn.wqkv')?.arraySync()).toEqual(p2.get('h0.attn.wqkv')?.arraySync());
    tf.dispose([...p1.values(), ...p2.values()]);
  });

  it('rejects a sequence longer than the context', () => {
    const params = initParams(small, 1);
    const tokens = tf.zeros([1, small.contextLength + 1], 'int32') as tf.Tensor2D;
    expect(() => forward(params, small, tokens)).toThrow(/exceeds context/);
    tf.dispose([tokens, ...params.values()]);
  });
});
