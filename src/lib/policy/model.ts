import * as tf from '@tensorflow/tfjs';
import { validateModelArgs, type ModelArgs } from './config';

/** Trainable parameters by name, in a fixed creation order (the order checkpoints use). */
export type Params = Map<string, tf.Variable>;

/** Output of a forward pass. Both tensors are owned by the caller. */
export interface PolicyOutput {
  /** Unnormalised next-token scores, [B, T, V]. */
  logits: tf.Tensor3D;
  /** State-value estimate at every position, [B, T]. */
  values: tf.Tensor2D;
}

/** Names and shapes of every parameter of a model with `args`, in creation order. */
export function paramShapes(args: ModelArgs): [string, number[]][] {
  const { vocabSize: V, contextLength: T, dModel: D, nLayers, dMlp: M } = args;
  const shapes: [string, number[]][] = [
    ['tok_emb', [V, D]],
    ['pos_emb', [T, D]],
  ];
  for (let l = 0; l < nLayers; l++) {
    shapes.push(
      [`h${l}.ln1.g`, [D]],
      [`h${l}.ln1.b`, [D]],
      [`h${l}.attn.wqkv`, [D, 3 * D]],
      [`h${l}.attn.bqkv`, [3 * D]],
      [`h${l}.attn.wo`, [D, D]],
      [`h${l}.attn.bo`, [D]],
      [`h${l}.ln2.g`, [D]],
      [`h${l}.ln2.b`, [D]],
      [`h${l}.mlp.w1`, [D, M]],
      [`h${l}.mlp.b1`, [M]],
      [`h${l}.mlp.w2`, [M, D]],
      [`h${l}.mlp.b2`, [D]],
    );
  }
  shapes.push(['ln_f.g', [D]], ['ln_f.b', [D]], ['head.w', [D, V]], ['value.w', [D, 1]], ['value.b', [1]]);
  return shapes;
}

/**
 * Creates the parameters, GPT-2 style: N(0, 0.02) matrices, residual projections scaled by
 * 1/√(2·nLayers), zero biases, unit layer-norm gains. Deterministic for a given seed.
 */
export function initParams(args: ModelArgs, seed: number): Params {
  validateModelArgs(args);
  const params: Params = new Map();
  let s = seed;
  for (const [name, shape] of paramShapes(args)) {
    const init = tf.tidy(() => {
      if (name.endsWith('.g')) return tf.ones(shape);
      if (/\.b(qkv|o|\d)?$/.test(name)) return tf.zeros(shape);
      const std =
        name.endsWith('attn.wo') || name.endsWith('mlp.w2') ? 0.02 / Math.sqrt(2 * args.nLayers) : 0.02;
      return tf.randomNormal(shape, 0, std, 'float32', s++);
    });
    params.set(name, tf.variable(init, true));
    init.dispose();
  }
  return params;
}

/** Number of scalar parameters. */
export function countParams(params: Params): number {
  let n = 0;
  for (const v of params.values()) n += v.size;
  return n;
}

function p(params: Params, name: string): tf.Variable {
  const v = params.get(name);
  if (!v) throw new Error(`missing parameter ${name}`);
  return v;
}

function layerNorm(x: tf.Tensor3D, g: tf.Tensor, b: tf.Tensor): tf.Tensor3D {
  const { mean, variance } = tf.moments(x, -1, true); // [B, T, 1] each
  return x.sub(mean).div(variance.add(1e-5).sqrt()).mul(g).add(b); // [B, T, D]
}

/** GELU, sigmoid approximation x·σ(1.702x): one fused-friendly op on every backend. */
function gelu(x: tf.Tensor3D): tf.Tensor3D {
  return x.mul(tf.sigmoid(x.mul(1.702))); // [B, T, M]
}

/** Additive causal mask: 0 on and below the diagonal, −1e9 above. [T, T] */
function causalMask(T: number): tf.Tensor2D {
  const lower = tf.linalg.bandPart(tf.ones([T, T]), -1, 0); // [T, T]
  return tf.sub(1, lower).mul(-1e9) as tf.Tensor2D; // [T, T]
}

/** Applies a [D, N] matrix to the last axis of a [B, T, D] tensor. */
function linear(x: tf.Tensor3D, w: tf.Tensor, b?: tf.Tensor): tf.Tensor3D {
  const [B, T, D] = x.shape;
  const y = x.reshape([B * T, D]).matMul(w as tf.Tensor2D); // [B·T, N]
  const out = y.reshape([B, T, w.shape[1] ?? 1]) as tf.Tensor3D; // [B, T, N]
  return b ? out.add(b) : out;
}

/**
 * Full forward pass over `tokens` ([B, T] int32, T ≤ contextLength): causal self-attention
 * blocks, then the policy head (logits) and the value head. Call inside `tf.tidy` or dispose
 * the outputs.
 */
export function forward(params: Params, args: ModelArgs, tokens: tf.Tensor2D): PolicyOutput {
  const [B, T] = tokens.shape;
  if (T > args.contextLength) throw new Error(`sequence length ${T} exceeds context ${args.contextLength}`);
  const D = args.dModel;
  const H = args.nHeads;
  const Dh = D / H;
  return tf.tidy(() => {
    const oneHot = tf.oneHot(tokens, args.vocabSize).toFloat(); // [B, T, V]
    const tok = linear(oneHot as tf.Tensor3D, p(params, 'tok_emb')); // [B, T, D]
    const pos = p(params, 'pos_emb').slice([0, 0], [T, D]); // [T, D]
    let x = tok.add(pos) as tf.Tensor3D; // [B, T, D]
    const mask = causalMask(T); // [T, T]
    const heads = (t: tf.Tensor3D) => t.reshape([B, T, H, Dh]).transpose([0, 2, 1, 3]) as tf.Tensor4D; // [B, H, T, Dh]
    for (let l = 0; l < args.nLayers; l++) {
      const h = layerNorm(x, p(params, `h${l}.ln1.g`), p(params, `h${l}.ln1.b`)); // [B, T, D]
      const qkv = linear(h, p(params, `h${l}.attn.wqkv`), p(params, `h${l}.attn.bqkv`)); // [B, T, 3D]
      const [q, k, v] = tf.split(qkv, 3, -1) as [tf.Tensor3D, tf.Tensor3D, tf.Tensor3D]; // 3 × [B, T, D]
      const scores = tf
        .matMul(heads(q), heads(k), false, true)
        .mul(1 / Math.sqrt(Dh))
        .add(mask); // [B, H, T, T]
      const att = tf.softmax(scores); // [B, H, T, T]
      const ctx = tf.matMul(att, heads(v)).transpose([0, 2, 1, 3]).reshape([B, T, D]) as tf.Tensor3D; // [B, T, D]
      x = x.add(linear(ctx, p(params, `h${l}.attn.wo`), p(params, `h${l}.attn.bo`))); // [B, T, D]
      const h2 = layerNorm(x, p(params, `h${l}.ln2.g`), p(params, `h${l}.ln2.b`)); // [B, T, D]
      const m = gelu(linear(h2, p(params, `h${l}.mlp.w1`), p(params, `h${l}.mlp.b1`))); // [B, T, M]
      x = x.add(linear(m, p(params, `h${l}.mlp.w2`), p(params, `h${l}.mlp.b2`))); // [B, T, D]
    }
    const hf = layerNorm(x, p(params, 'ln_f.g'), p(params, 'ln_f.b')); // [B, T, D]
    const logits = linear(hf, p(params, 'head.w')); // [B, T, V]
    const values = linear(hf, p(params, 'value.w'), p(params, 'value.b')).squeeze([2]) as tf.Tensor2D; // [B, T]
    return { logits, values };
  });
}
