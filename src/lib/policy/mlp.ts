import * as tf from '@tensorflow/tfjs';
import type { Params } from './model';
import { packParams, unpackTensors, type PackedTensors } from './weights';

/** Shape of the MLP policy for custom environments (DESIGN §3). */
export interface MlpArgs {
  /** Length of the observation vector. */
  inputs: number;
  /** Width of the hidden layer. */
  hidden: number;
  /** Number of discrete actions. */
  actions: number;
}

/** A two-layer tanh MLP with a policy head and a value head; small normal init, seeded. */
export function initMlp(args: MlpArgs, seed: number): Params {
  const { inputs: I, hidden: H, actions: A } = args;
  const v = (name: string, t: tf.Tensor) => {
    const variable = tf.variable(t, true);
    t.dispose(); // the variable keeps its own reference to the data
    return [name, variable] as const;
  };
  return new Map([
    v('w1', tf.randomNormal([I, H], 0, 1 / Math.sqrt(I), 'float32', seed)), // [I, H]
    v('b1', tf.zeros([H])), // [H]
    v('wp', tf.randomNormal([H, A], 0, 0.01, 'float32', seed + 1)), // [H, A]
    v('bp', tf.zeros([A])), // [A]
    v('wv', tf.randomNormal([H, 1], 0, 1 / Math.sqrt(H), 'float32', seed + 2)), // [H, 1]
    v('bv', tf.zeros([1])), // [1]
  ]);
}

const get = (p: Params, name: string): tf.Variable => {
  const t = p.get(name);
  if (!t) throw new Error(`mlp parameter ${name} is missing`);
  return t;
};

/** Logits [B, A] and values [B] for observations [B, I]. */
export function mlpForward(p: Params, obs: tf.Tensor2D): { logits: tf.Tensor2D; values: tf.Tensor1D } {
  return tf.tidy(() => {
    const h = obs.matMul(get(p, 'w1')).add(get(p, 'b1')).tanh() as tf.Tensor2D; // [B, H]
    const logits = h.matMul(get(p, 'wp')).add(get(p, 'bp')) as tf.Tensor2D; // [B, A]
    const values = h.matMul(get(p, 'wv')).add(get(p, 'bv')).squeeze([1]) as tf.Tensor1D; // [B]
    return { logits, values };
  });
}

/** The same policy as plain arrays, for acting step by step without a tensor op per step. */
export interface MlpSnapshot {
  args: MlpArgs;
  w1: Float32Array;
  b1: Float32Array;
  wp: Float32Array;
  bp: Float32Array;
}

export async function snapshotMlp(p: Params, args: MlpArgs): Promise<MlpSnapshot> {
  const read = async (n: string) => new Float32Array(await get(p, n).data());
  return { args, w1: await read('w1'), b1: await read('b1'), wp: await read('wp'), bp: await read('bp') };
}

/** Action logits of one observation, computed on the CPU from a snapshot. */
export function mlpLogits(s: MlpSnapshot, obs: readonly number[]): number[] {
  const { inputs: I, hidden: H, actions: A } = s.args;
  const h = new Float64Array(H);
  for (let j = 0; j < H; j++) {
    let z = s.b1[j] ?? 0;
    for (let i = 0; i < I; i++) z += (obs[i] ?? 0) * (s.w1[i * H + j] ?? 0);
    h[j] = Math.tanh(z);
  }
  return Array.from({ length: A }, (_, a) => {
    let z = s.bp[a] ?? 0;
    for (let j = 0; j < H; j++) z += (h[j] ?? 0) * (s.wp[j * A + a] ?? 0);
    return z;
  });
}

/** A stored version of an MLP policy: its shape, every parameter (value head too), Adam's state. */
export interface MlpCheckpoint {
  format: 'sandbox-rl-lab/mlp@1';
  mlp: MlpArgs;
  params: PackedTensors;
  /** Adam moments and step counter. */
  optimizer?: PackedTensors;
  /** Adam steps taken when the checkpoint was made. */
  step: number;
}

/** The parameter shapes an MLP with `args` has, in creation order. */
function mlpShapes({ inputs: I, hidden: H, actions: A }: MlpArgs): [string, number[]][] {
  return [
    ['w1', [I, H]],
    ['b1', [H]],
    ['wp', [H, A]],
    ['bp', [A]],
    ['wv', [H, 1]],
    ['bv', [1]],
  ];
}

/** Packs an MLP's parameters (and, when given, its optimiser state) as a checkpoint. */
export async function mlpCheckpoint(
  p: Params,
  args: MlpArgs,
  step: number,
  optimizer?: PackedTensors,
): Promise<MlpCheckpoint> {
  return {
    format: 'sandbox-rl-lab/mlp@1',
    mlp: args,
    params: await packParams(p),
    step,
    ...(optimizer ? { optimizer } : {}),
  };
}

/**
 * The acting part of a stored MLP as a snapshot (plain arrays, no tensors), after checking that
 * every parameter is there with the shape the checkpoint's args give.
 */
export function snapshotFromCheckpoint(ckpt: MlpCheckpoint): MlpSnapshot {
  if (ckpt.format !== 'sandbox-rl-lab/mlp@1')
    throw new Error(`not an MLP checkpoint (format ${String(ckpt.format)})`);
  const all = new Float32Array(ckpt.params.data);
  const byName = new Map(ckpt.params.entries.map((e) => [e.name, e]));
  const read = (name: string, shape: number[]): Float32Array => {
    const e = byName.get(name);
    if (!e) throw new Error(`MLP checkpoint is missing parameter ${name}`);
    if (e.shape.join(',') !== shape.join(','))
      throw new Error(`MLP parameter ${name} has shape [${e.shape}], the policy needs [${shape}]`);
    const n = shape.reduce((a, b) => a * b, 1);
    if (!Number.isInteger(e.offset) || e.offset < 0 || e.offset + n > all.length)
      throw new Error(`MLP parameter ${name} lies outside the buffer (${all.length} floats)`);
    return all.slice(e.offset, e.offset + n);
  };
  const shapes = mlpShapes(ckpt.mlp);
  if (byName.size !== shapes.length)
    throw new Error(`MLP checkpoint has ${byName.size} tensors, the policy ${shapes.length}`);
  const p = new Map(shapes.map(([name, shape]) => [name, read(name, shape)]));
  const at = (name: string) => p.get(name) ?? new Float32Array();
  return { args: ckpt.mlp, w1: at('w1'), b1: at('b1'), wp: at('wp'), bp: at('bp') };
}

/**
 * Trainable parameters of a stored MLP (every one, the value head too), after the same checks as
 * `snapshotFromCheckpoint`: a training resumed from it goes on with exactly these weights.
 */
export function paramsFromMlpCheckpoint(ckpt: MlpCheckpoint): Params {
  snapshotFromCheckpoint(ckpt); // throws, naming the problem, on a malformed checkpoint
  const byName = new Map(unpackTensors(ckpt.params).map((e) => [e.name, e.tensor]));
  const params: Params = new Map();
  for (const [name] of mlpShapes(ckpt.mlp)) {
    const t = byName.get(name) as tf.Tensor; // present: checked above
    params.set(name, tf.variable(t, true));
  }
  tf.dispose([...byName.values()]);
  return params;
}
