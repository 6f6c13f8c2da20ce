import * as tf from '@tensorflow/tfjs';
import { validateModelArgs, type ModelArgs } from './config';
import { affinePlainGrad, matMulPlainGrad } from './matmul';
import { gelu, layerNorm } from './ops';

/** Trainable parameters by name, in a fixed creation order (the order checkpoints use). */
export type Params = Map<string, tf.Variable>;

/** Weights a forward pass reads: the parameters themselves, or a merge of base and LoRA adapters. */
export type Weights = ReadonlyMap<string, tf.Tensor>;

/** Output of a forward pass. Both tensors are owned by the caller. */
export type PolicyOutput = {
  /** Unnormalised next-token scores, [B, T, V]. */
  logits: tf.Tensor3D;
  /** State-value estimate at every position, [B, T]. */
  values: tf.Tensor2D;
};

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
  shapes.push(['ln_f.g', [D]], ['ln_f.b', [D]]);
  // A tied model's vocabulary head is tok_emb transposed: no parameter of its own.
  if (!args.tieEmbeddings) shapes.push(['head.w', [D, V]]);
  shapes.push(['value.w', [D, 1]], ['value.b', [1]]);
  const P = args.pointerDim ?? 0;
  if (P > 0) shapes.push(['ptr.wq', [D, P]], ['ptr.wk', [D, P]], ['ptr.gate.w', [D, 1]], ['ptr.gate.b', [1]]);
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

function p(params: Weights, name: string): tf.Tensor {
  const v = params.get(name);
  if (!v) throw new Error(`missing parameter ${name}`);
  return v;
}

/** Additive causal mask: 0 on and below the diagonal, −1e9 above. [T, T] */
function causalMask(T: number): tf.Tensor2D {
  const lower = tf.linalg.bandPart(tf.ones([T, T]), -1, 0); // [T, T]
  return tf.sub(1, lower).mul(-1e9) as tf.Tensor2D; // [T, T]
}

/** Applies a [D, N] matrix to the last axis of a [B, T, D] tensor. */
function linear(x: tf.Tensor3D, w: tf.Tensor, b?: tf.Tensor): tf.Tensor3D {
  const [B, T, D] = x.shape;
  const x2 = x.reshape([B * T, D]) as tf.Tensor2D; // [B·T, D]
  const y = b
    ? affinePlainGrad(x2, w as tf.Tensor2D, b as tf.Tensor1D)
    : matMulPlainGrad(x2, w as tf.Tensor2D); // [B·T, N]
  return y.reshape([B, T, w.shape[1] ?? 1]) as tf.Tensor3D; // [B, T, N]
}

/** Keys and values of one layer, [B, H, T, Dh] each (T: the positions computed or cached). */
export type LayerKV = {
  k: tf.Tensor4D;
  v: tf.Tensor4D;
};

/** Output of a forward pass that also returns every layer's keys and values (for a KV cache). */
export type PolicyOutputWithKV = PolicyOutput & { kv: LayerKV[] };

/**
 * The transformer blocks over `x` ([B, T, D]). `attend(l, q, k, v)` returns the attention
 * output [B, H, T, Dh] of layer l for queries q and this call's keys/values k, v ([B, H, T, Dh]):
 * full causal attention in `forward`, attention over the cache in `decodeStep`.
 */
function blocks(
  params: Weights,
  args: ModelArgs,
  x0: tf.Tensor3D,
  attend: (l: number, q: tf.Tensor4D, k: tf.Tensor4D, v: tf.Tensor4D) => tf.Tensor4D,
): tf.Tensor3D {
  const [B, T, D] = x0.shape;
  const H = args.nHeads;
  const Dh = D / H;
  const heads = (t: tf.Tensor3D) => t.reshape([B, T, H, Dh]).transpose([0, 2, 1, 3]) as tf.Tensor4D; // [B, H, T, Dh]
  let x = x0;
  for (let l = 0; l < args.nLayers; l++) {
    const h = layerNorm(x, p(params, `h${l}.ln1.g`), p(params, `h${l}.ln1.b`)); // [B, T, D]
    const qkv = linear(h, p(params, `h${l}.attn.wqkv`), p(params, `h${l}.attn.bqkv`)); // [B, T, 3D]
    const [q, k, v] = tf.split(qkv, 3, -1) as [tf.Tensor3D, tf.Tensor3D, tf.Tensor3D]; // 3 × [B, T, D]
    const ctx = attend(l, heads(q), heads(k), heads(v))
      .transpose([0, 2, 1, 3])
      .reshape([B, T, D]) as tf.Tensor3D; // [B, T, D]
    x = x.add(linear(ctx, p(params, `h${l}.attn.wo`), p(params, `h${l}.attn.bo`))); // [B, T, D]
    const h2 = layerNorm(x, p(params, `h${l}.ln2.g`), p(params, `h${l}.ln2.b`)); // [B, T, D]
    const m = gelu(linear(h2, p(params, `h${l}.mlp.w1`), p(params, `h${l}.mlp.b1`))); // [B, T, M]
    x = x.add(linear(m, p(params, `h${l}.mlp.w2`), p(params, `h${l}.mlp.b2`))); // [B, T, D]
  }
  return x;
}

/** The vocabulary head's matrix: `head.w`, or tok_embᵀ when the model ties them. [D, V] */
function headMatrix(params: Weights, args: ModelArgs): tf.Tensor {
  return args.tieEmbeddings ? p(params, 'tok_emb').transpose() : p(params, 'head.w'); // [D, V]
}

/** The policy and value heads on the final residual stream [B, T, D]; `hf` is its final norm. */
function heads(params: Weights, args: ModelArgs, x: tf.Tensor3D): PolicyOutput & { hf: tf.Tensor3D } {
  const hf = layerNorm(x, p(params, 'ln_f.g'), p(params, 'ln_f.b')); // [B, T, D]
  const logits = linear(hf, headMatrix(params, args)); // [B, T, V]
  const values = linear(hf, p(params, 'value.w'), p(params, 'value.b')).squeeze([2]) as tf.Tensor2D; // [B, T]
  return { logits, values, hf };
}

/** Probability floor of the copy head's mixture, so that its log stays finite. */
const MIX_FLOOR = 1e-6;

/**
 * The copy head (pointer-generator): position t attends over the context's positions s (its
 * queries from `hf`, keys from each position's `hf`, `mask` −1e9 where s is not visible), and the
 * attention mass of the positions holding token v is the copy probability of v. A gate mixes it
 * with the vocabulary head's softmax; the result is returned as log-probabilities, which serve as
 * logits (softmax of them, masked or not, is the mixture renormalised).
 */
function copyMix(
  params: Weights,
  hf: tf.Tensor3D, // [B, T, D]
  logits: tf.Tensor3D, // [B, T, V]
  keys: tf.Tensor3D, // [B, S, P]
  tokens: tf.Tensor3D, // [B, S, V] one-hot
  mask: tf.Tensor, // broadcasts to [B, T, S]
): tf.Tensor3D {
  const P = keys.shape[2];
  const q = linear(hf, p(params, 'ptr.wq')); // [B, T, P]
  const scores = tf
    .matMul(q, keys, false, true)
    .mul(1 / Math.sqrt(P))
    .add(mask); // [B, T, S]
  const copy = tf.matMul(tf.softmax(scores), tokens); // [B, T, V]
  const gate = tf.sigmoid(linear(hf, p(params, 'ptr.gate.w'), p(params, 'ptr.gate.b'))); // [B, T, 1]
  const mixed = tf
    .softmax(logits)
    .mul(gate)
    .add(copy.mul(tf.sub(1, gate))); // [B, T, V]
  return mixed.add(MIX_FLOOR).log() as tf.Tensor3D; // [B, T, V]
}

/** Token + position embeddings of `tokens` ([B, T] int32) at `positions` ([B, T] int32). */
function embed(params: Weights, args: ModelArgs, tokens: tf.Tensor2D, positions: tf.Tensor2D): tf.Tensor3D {
  const oneHot = tf.oneHot(tokens, args.vocabSize).toFloat() as tf.Tensor3D; // [B, T, V]
  const tok = linear(oneHot, p(params, 'tok_emb')); // [B, T, D]
  const posOneHot = tf.oneHot(positions, args.contextLength).toFloat() as tf.Tensor3D; // [B, T, Tmax]
  return tok.add(linear(posOneHot, p(params, 'pos_emb'))); // [B, T, D]
}

/**
 * Full forward pass over `tokens` ([B, T] int32, T ≤ contextLength): causal self-attention
 * blocks, then the policy head (logits) and the value head. Call inside `tf.tidy` or dispose
 * the outputs. With `keepKV`, also returns every layer's keys and values (a cache prefill).
 */
export function forward(params: Weights, args: ModelArgs, tokens: tf.Tensor2D): PolicyOutput;
export function forward(
  params: Weights,
  args: ModelArgs,
  tokens: tf.Tensor2D,
  keepKV: true,
): PolicyOutputWithKV;
export function forward(
  params: Weights,
  args: ModelArgs,
  tokens: tf.Tensor2D,
  keepKV = false,
): PolicyOutput | PolicyOutputWithKV {
  const [B, T] = tokens.shape;
  if (T > args.contextLength) throw new Error(`sequence length ${T} exceeds context ${args.contextLength}`);
  const Dh = args.dModel / args.nHeads;
  return tf.tidy(() => {
    const positions = tf.range(0, T, 1, 'int32').expandDims(0).tile([B, 1]) as tf.Tensor2D; // [B, T]
    const x0 = embed(params, args, tokens, positions); // [B, T, D]
    const mask = causalMask(T); // [T, T]
    const kv: LayerKV[] = [];
    const x = blocks(params, args, x0, (_l, q, k, v) => {
      if (keepKV) kv.push({ k, v });
      const scores = tf
        .matMul(q, k, false, true)
        .mul(1 / Math.sqrt(Dh))
        .add(mask); // [B, H, T, T]
      return tf.matMul(tf.softmax(scores), v) as tf.Tensor4D; // [B, H, T, Dh]
    });
    const { logits: vocab, values, hf } = heads(params, args, x); // [B, T, V], [B, T], [B, T, D]
    let logits = vocab;
    if ((args.pointerDim ?? 0) > 0) {
      const onehot = tf.oneHot(tokens, args.vocabSize).toFloat() as tf.Tensor3D; // [B, T, V]
      const keys = linear(hf, p(params, 'ptr.wk')); // [B, T, P]
      // The copy head's cache is one more "layer": keys [B, 1, T, P], tokens [B, 1, T, V].
      if (keepKV) kv.push({ k: keys.expandDims(1) as tf.Tensor4D, v: onehot.expandDims(1) as tf.Tensor4D });
      logits = copyMix(params, hf, vocab, keys, onehot, mask);
    }
    return keepKV ? { logits, values, kv } : { logits, values };
  });
}

/**
 * One incremental decoding step with a KV cache (DESIGN §4): each row b reads one token
 * `tokens[b]` at position `positions[b]`, writes its key and value into the cache at that
 * slot, and attends over the cache's slots 0..positions[b]. Returns the logits and value at
 * that position and the updated cache (the old cache tensors are disposed).
 */
export function decodeStep(
  params: Weights,
  args: ModelArgs,
  cache: LayerKV[], // per layer, [B, H, Tmax, Dh] each
  tokens: tf.Tensor1D, // [B] int32
  positions: tf.Tensor1D, // [B] int32
): { logits: tf.Tensor2D; values: tf.Tensor1D; cache: LayerKV[] } {
  const Tmax = args.contextLength;
  const Dh = args.dModel / args.nHeads;
  const next: LayerKV[] = [];
  const out = tf.tidy(() => {
    const slot = tf.oneHot(positions, Tmax).toFloat().reshape([-1, 1, Tmax, 1]) as tf.Tensor4D; // [B, 1, Tmax, 1]
    const keep = tf.scalar(1).sub(slot); // [B, 1, Tmax, 1]
    // Slots after each row's position are not attended: additive −1e9.
    const visible = tf.range(0, Tmax, 1, 'int32').expandDims(0).lessEqual(positions.expandDims(1)); // [B, Tmax]
    const mask = tf.scalar(1).sub(visible.toFloat()).mul(-1e9).reshape([-1, 1, 1, Tmax]); // [B, 1, 1, Tmax]
    const x0 = embed(
      params,
      args,
      tokens.expandDims(1) as tf.Tensor2D,
      positions.expandDims(1) as tf.Tensor2D,
    ); // [B, 1, D]
    const x = blocks(params, args, x0, (l, q, k, v) => {
      const c = cache[l];
      if (!c) throw new Error(`the cache has no layer ${l}`);
      const K = c.k.mul(keep).add(slot.mul(k)) as tf.Tensor4D; // [B, H, Tmax, Dh]
      const V = c.v.mul(keep).add(slot.mul(v)) as tf.Tensor4D; // [B, H, Tmax, Dh]
      next.push({ k: tf.keep(K), v: tf.keep(V) });
      const scores = tf
        .matMul(q, K, false, true)
        .mul(1 / Math.sqrt(Dh))
        .add(mask); // [B, H, 1, Tmax]
      return tf.matMul(tf.softmax(scores), V) as tf.Tensor4D; // [B, H, 1, Dh]
    });
    const { logits: vocab, values, hf } = heads(params, args, x); // [B, 1, V], [B, 1], [B, 1, D]
    let logits = vocab;
    if ((args.pointerDim ?? 0) > 0) {
      const c = cache[args.nLayers];
      if (!c) throw new Error('the cache has no copy-head entry');
      const key = linear(hf, p(params, 'ptr.wk')).expandDims(1); // [B, 1, 1, P]
      const onehot = tf.oneHot(tokens, args.vocabSize).toFloat().reshape([-1, 1, 1, args.vocabSize]); // [B, 1, 1, V]
      const K = c.k.mul(keep).add(slot.mul(key)) as tf.Tensor4D; // [B, 1, Tmax, P]
      const Tok = c.v.mul(keep).add(slot.mul(onehot)) as tf.Tensor4D; // [B, 1, Tmax, V]
      next.push({ k: tf.keep(K), v: tf.keep(Tok) });
      const m = mask.reshape([-1, 1, Tmax]); // [B, 1, Tmax]
      logits = copyMix(params, hf, vocab, K.squeeze([1]) as tf.Tensor3D, Tok.squeeze([1]) as tf.Tensor3D, m);
    }
    return { logits: logits.squeeze([1]) as tf.Tensor2D, values: values.squeeze([1]) as tf.Tensor1D };
  });
  for (const c of cache) tf.dispose([c.k, c.v]);
  return { ...out, cache: next };
}
