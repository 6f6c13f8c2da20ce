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

  it('with tied embeddings, has no head.w and V·D fewer parameters', () => {
    const tied: ModelArgs = { ...small, tieEmbeddings: true };
    const names = paramShapes(tied).map(([n]) => n);
    expect(names).not.toContain('head.w');
    expect(paramShapes(small).map(([n]) => n)).toContain('head.w');
    const a = initParams(small, 4);
    const b = initParams(tied, 4);
    expect(countParams(a) - countParams(b)).toBe(small.vocabSize * small.dModel);
    expect(b.has('head.w')).toBe(false);
    tf.dispose([...a.values(), ...b.values()]);
  });

  it('with tied embeddings, computes logits = ln_f(x) · tok_embᵀ (by hand, blocks writing nothing)', () => {
    const tied: ModelArgs = { ...small, nLayers: 1, tieEmbeddings: true };
    const params = initParams(tied, 6);
    const { vocabSize: V, dModel: D } = tied;
    // Blocks that add nothing to the residual stream: x = tok_emb[token] + pos_emb[t].
    for (const n of ['h0.attn.wo', 'h0.attn.bo', 'h0.mlp.w2', 'h0.mlp.b2']) {
      const v = params.get(n) as tf.Variable;
      v.assign(tf.zerosLike(v));
    }
    // A final norm whose gain and bias matter.
    for (const [n, seed] of [
      ['ln_f.g', 1],
      ['ln_f.b', 2],
    ] as const) {
      const r = tf.randomNormal([D], 0, 0.5, 'float32', seed);
      (params.get(n) as tf.Variable).assign(r);
      r.dispose();
    }
    const seq = [1, 7, 3, 12];
    const tokens = tf.tensor2d([seq], [1, seq.length], 'int32');
    const got = tf.tidy(() => forward(params, tied, tokens).logits.arraySync()[0] ?? []); // [T][V]
    const emb = params.get('tok_emb')?.dataSync() as Float32Array; // [V·D]
    const pos = params.get('pos_emb')?.dataSync() as Float32Array; // [Tmax·D]
    const g = params.get('ln_f.g')?.dataSync() as Float32Array;
    const b = params.get('ln_f.b')?.dataSync() as Float32Array;
    seq.forEach((tok, t) => {
      const x = Array.from(
        { length: D },
        (_, d) => (emb[tok * D + d] as number) + (pos[t * D + d] as number),
      );
      const mu = x.reduce((a, v) => a + v, 0) / D;
      const sd = Math.sqrt(x.reduce((a, v) => a + (v - mu) ** 2, 0) / D + 1e-5);
      const h = x.map((v, d) => ((v - mu) / sd) * (g[d] as number) + (b[d] as number));
      for (let v = 0; v < V; v++) {
        const want = h.reduce((a, hd, d) => a + hd * (emb[v * D + d] as number), 0);
        expect(got[t]?.[v]).toBeCloseTo(want, 4);
      }
    });
    tf.dispose([tokens, ...params.values()]);
  });

  it('with tied embeddings, is the untied model whose head.w is tok_embᵀ, and tok_emb gets both uses’ gradients', () => {
    const tied: ModelArgs = { ...small, tieEmbeddings: true };
    const params = initParams(tied, 8);
    const untied = new Map(params);
    const headW = tf.variable(tf.tidy(() => (params.get('tok_emb') as tf.Tensor).transpose())); // [D, V]
    untied.set('head.w', headW);
    const seq = [1, 5, 6, 7, 5, 8];
    const tokens = tf.tensor2d([seq], [1, seq.length], 'int32');
    const mix = tf.randomNormal([1, seq.length, small.vocabSize], 0, 1, 'float32', 3); // [1, T, V]
    const lossOf = (w: Map<string, tf.Tensor>, a: ModelArgs) => () =>
      forward(w, a, tokens).logits.mul(mix).sum() as tf.Scalar;
    const a = tf.tidy(() => forward(params, tied, tokens).logits.arraySync());
    const b = tf.tidy(() => forward(untied, small, tokens).logits.arraySync());
    expect(a).toEqual(b);
    const embVar = params.get('tok_emb') as tf.Variable;
    const gTied = tf.variableGrads(lossOf(params, tied), [embVar]);
    const gUntied = tf.variableGrads(lossOf(untied, small), [embVar, headW]);
    const viaBoth = tf.tidy(() =>
      (gUntied.grads[embVar.name] as tf.Tensor).add((gUntied.grads[headW.name] as tf.Tensor).transpose()),
    ); // [V, D]
    const want = viaBoth.arraySync() as number[][];
    const got = (gTied.grads[embVar.name] as tf.Tensor).arraySync() as number[][];
    got.forEach((row, v) => row.forEach((x, d) => expect(x).toBeCloseTo(want[v]?.[d] ?? NaN, 4)));
    // A token never read still gets a gradient, through the head alone.
    expect(got[20]?.some((x) => Math.abs(x) > 1e-6)).toBe(true);
    const embOnly = (gUntied.grads[embVar.name] as tf.Tensor).arraySync() as number[][];
    expect(embOnly[20]?.every((x) => x === 0)).toBe(true);
    tf.dispose([
      tokens,
      mix,
      viaBoth,
      gTied.value,
      gUntied.value,
      ...Object.values(gTied.grads),
      ...Object.values(gUntied.grads),
      headW,
      ...params.values(),
    ]);
  });

  it('rejects a sequence longer than the context', () => {
    const params = initParams(small, 1);
    const tokens = tf.zeros([1, small.contextLength + 1], 'int32') as tf.Tensor2D;
    expect(() => forward(params, small, tokens)).toThrow(/exceeds context/);
    tf.dispose([tokens, ...params.values()]);
  });
});
