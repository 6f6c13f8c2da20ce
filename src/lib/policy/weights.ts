import * as tf from '@tensorflow/tfjs';
import { validateModelArgs, type ModelArgs } from './config';
import { LORA_TRAINED_WHOLE, type LoraConfig } from './lora';
import { paramShapes, type Params } from './model';

/** Where one tensor lives inside a packed buffer. */
export interface TensorEntry {
  name: string;
  shape: number[];
  /** Stored as float32 either way; int32 entries (e.g. Adam's step counter) are cast back. */
  dtype: 'float32' | 'int32';
  /** Offset in float32 elements from the start of the buffer. */
  offset: number;
}

/** Tensors packed into one ArrayBuffer plus the manifest needed to read them back. */
export interface PackedTensors {
  entries: TensorEntry[];
  /** Float32 values of every entry, back to back. */
  data: ArrayBuffer;
}

/** A checkpoint of the policy: model args + parameters (+ optimiser state for resume). */
export interface Checkpoint {
  format: 'sandbox-rl-lab/weights@1';
  model: ModelArgs;
  params: PackedTensors;
  /** Adam moments and step counter; absent in a weights-only export. */
  optimizer?: PackedTensors;
  /** Optimiser steps taken when the checkpoint was made. */
  step: number;
  /**
   * Present when `params` holds only LoRA adapters (`…lora_a`, `…lora_b`) and the tensors a LoRA
   * run trains whole (`LORA_TRAINED_WHOLE`, the value head): the weights are the last full
   * checkpoint merged with them (DESIGN §4).
   */
  lora?: LoraConfig;
}

const size = (shape: number[]) => shape.reduce((a, b) => a * b, 1);

/** Reads `tensors` back from the backend (async, no GPU stall) into one buffer. */
export async function packTensors(tensors: { name: string; tensor: tf.Tensor }[]): Promise<PackedTensors> {
  const entries: TensorEntry[] = [];
  let offset = 0;
  for (const { name, tensor } of tensors) {
    if (tensor.dtype !== 'float32' && tensor.dtype !== 'int32') {
      throw new Error(`tensor ${name} is ${tensor.dtype}; only float32 and int32 are packed`);
    }
    entries.push({ name, shape: [...tensor.shape], dtype: tensor.dtype, offset });
    offset += tensor.size;
  }
  const all = new Float32Array(offset);
  const values = await Promise.all(tensors.map(({ tensor }) => tensor.data()));
  values.forEach((v, i) => all.set(v, entries[i]?.offset ?? 0));
  return { entries, data: all.buffer };
}

/** Splits a packed buffer back into tensors, checking every entry lies inside it. */
export function unpackTensors(packed: PackedTensors): { name: string; tensor: tf.Tensor }[] {
  const all = new Float32Array(packed.data);
  // Every entry is checked before any tensor is made: a refused buffer leaks none.
  const names = new Set<string>();
  for (const e of packed.entries) {
    const n = size(e.shape);
    if (!Number.isInteger(e.offset) || e.offset < 0 || e.offset + n > all.length) {
      throw new Error(`weights entry ${e.name} lies outside the buffer (${all.length} floats)`);
    }
    if (names.has(e.name)) throw new Error(`weights entry ${e.name} appears twice`);
    names.add(e.name);
  }
  return packed.entries.map((e) => ({
    name: e.name,
    tensor: tf.tensor(all.subarray(e.offset, e.offset + size(e.shape)), e.shape, e.dtype),
  }));
}

/** Adapters of a LoRA checkpoint, as variables. */
export function adaptersFromCheckpoint(ckpt: Pick<Checkpoint, 'params' | 'lora'>): Params {
  if (!ckpt.lora) throw new Error('not a LoRA checkpoint');
  // Checked on the manifest, before any tensor is made: a refused checkpoint leaks none.
  for (const { name } of ckpt.params.entries)
    if (!/\.lora_[ab]$/.test(name) && !LORA_TRAINED_WHOLE.includes(name))
      throw new Error(`LoRA checkpoint holds ${name}, which is no adapter`);
  const out: Params = new Map();
  for (const { name, tensor } of unpackTensors(ckpt.params)) {
    out.set(name, tf.variable(tensor, true));
    tensor.dispose();
  }
  return out;
}

/**
 * Packs an optimiser's state (Adam: its step counter, then its moments, and `rl/rate-adam.ts`'s
 * per-tensor step counts when they differ from it). `getWeights` makes the counters anew on every
 * call; they are disposed here (the moments are the optimiser's own).
 */
export async function packOptimizer(optimizer: tf.Optimizer): Promise<PackedTensors> {
  const weights = await optimizer.getWeights();
  try {
    return await packTensors(weights.map((w) => ({ name: w.name, tensor: w.tensor })));
  } finally {
    for (const w of weights) if (w.name === 'iter' || w.name === 'steps') w.tensor.dispose();
  }
}

/** Packs a model's parameters in creation order. */
export function packParams(params: Params): Promise<PackedTensors> {
  return packTensors([...params.entries()].map(([name, tensor]) => ({ name, tensor })));
}

/**
 * Rebuilds trainable parameters from a checkpoint, checking that names and shapes are exactly
 * those a model with the checkpoint's args has.
 */
export function paramsFromCheckpoint(ckpt: Pick<Checkpoint, 'model' | 'params'>): Params {
  validateModelArgs(ckpt.model);
  const expected = paramShapes(ckpt.model);
  const got = new Map(ckpt.params.entries.map((e) => [e.name, e.shape]));
  for (const [name, shape] of expected) {
    const s = got.get(name);
    if (!s) throw new Error(`checkpoint is missing parameter ${name}`);
    if (s.join(',') !== shape.join(',')) {
      throw new Error(`parameter ${name} has shape [${s}], the model needs [${shape}]`);
    }
  }
  // Names the tensor a model with these args has no place for (head.w beside tied embeddings, say).
  const names = new Set(expected.map(([name]) => name));
  const extra = [...got.keys()].find((name) => !names.has(name));
  if (extra !== undefined) throw new Error(`checkpoint holds ${extra}, which a model with its args has not`);
  if (got.size !== expected.length)
    throw new Error(`checkpoint has ${got.size} tensors, the model ${expected.length}`);
  const params: Params = new Map();
  for (const { name, tensor } of unpackTensors(ckpt.params)) {
    params.set(name, tf.variable(tensor, true));
    tensor.dispose();
  }
  return params;
}
