import * as tf from '@tensorflow/tfjs';
import type { ModelArgs } from './config';
import type { Params, Weights } from './model';

/** Low-rank adapters (static LoRA, seed 004): W' = W + (alpha / rank) · A · B. */
export interface LoraConfig {
  /** Rank r of each adapter. */
  rank: number;
  /** Scale numerator: the update is multiplied by alpha / rank. */
  alpha: number;
}

export const DEFAULT_LORA: LoraConfig = { rank: 4, alpha: 8 };

/**
 * Parameters a LoRA run trains whole, beside the adapters (PEFT's `modules_to_save`): the value
 * head. Frozen at its random start it cannot fit the returns (|V| stays near ‖w‖·√D ≈ 1), and the
 * value loss would bend the adapters, and with them the policy, towards it instead. A LoRA
 * version holds them with the adapters, and merging takes them in place of the base's.
 */
export const LORA_TRAINED_WHOLE: readonly string[] = ['value.w', 'value.b'];

/** The matrices that get adapters: every attention and MLP matrix of every block. */
export function loraTargets(args: ModelArgs): string[] {
  return Array.from({ length: args.nLayers }, (_, l) => [
    `h${l}.attn.wqkv`,
    `h${l}.attn.wo`,
    `h${l}.mlp.w1`,
    `h${l}.mlp.w2`,
  ]).flat();
}

/**
 * Adapters for every target of `base`: A [in, r] ~ N(0, 1/in), B [r, out] = 0, so the merged
 * weights start equal to the base; then copies of the base's `LORA_TRAINED_WHOLE`, last (Adam's
 * moments go by position: a version stored without them still lines up). Deterministic for a seed.
 */
export function initLora(base: Weights, args: ModelArgs, cfg: LoraConfig, seed: number): Params {
  if (!Number.isInteger(cfg.rank) || cfg.rank < 1)
    throw new Error(`LoRA rank must be a positive integer, got ${cfg.rank}`);
  const out: Params = new Map();
  loraTargets(args).forEach((name, i) => {
    const w = base.get(name);
    if (!w || w.rank !== 2) throw new Error(`LoRA target ${name} is not a matrix of the base`);
    const [inDim = 0, outDim = 0] = w.shape;
    const a = tf.randomNormal([inDim, cfg.rank], 0, 1 / Math.sqrt(inDim), 'float32', seed + i); // [in, r]
    const b = tf.zeros([cfg.rank, outDim]); // [r, out]
    out.set(`${name}.lora_a`, tf.variable(a, true));
    out.set(`${name}.lora_b`, tf.variable(b, true));
    tf.dispose([a, b]);
  });
  for (const name of LORA_TRAINED_WHOLE) {
    const w = base.get(name);
    if (!w) throw new Error(`the base has no ${name} to train beside the adapters`);
    const copy = w.clone();
    out.set(name, tf.variable(copy, true));
    copy.dispose();
  }
  return out;
}

/**
 * The weights a LoRA policy runs with: W + (alpha/r)·A·B for each target, a tensor trained whole
 * (`LORA_TRAINED_WHOLE`, when `adapters` holds it) in place of the base's, the base tensor itself
 * elsewhere. Call inside `tf.tidy` (or a gradient closure): gradients reach A, B and those.
 */
export function mergeLora(base: Weights, adapters: Weights, cfg: LoraConfig): Map<string, tf.Tensor> {
  const merged = new Map<string, tf.Tensor>(base);
  const scale = cfg.alpha / cfg.rank;
  for (const [name, w] of base) {
    const whole = adapters.get(name);
    if (whole) {
      merged.set(name, whole);
      continue;
    }
    const a = adapters.get(`${name}.lora_a`);
    const b = adapters.get(`${name}.lora_b`);
    if (a && b) merged.set(name, w.add(tf.matMul(a as tf.Tensor2D, b as tf.Tensor2D).mul(scale))); // [in, out]
  }
  return merged;
}

/**
 * `mergeLora` as tensors the caller owns: merged matrices are new tensors, the others clones
 * of the base or of the adapters' whole tensors (sharing their data), so disposing the result
 * never frees either.
 */
export function mergedWeights(base: Weights, adapters: Weights, cfg: LoraConfig): Map<string, tf.Tensor> {
  const obj = tf.tidy(() => {
    const m = mergeLora(base, adapters, cfg);
    return Object.fromEntries(
      [...m].map(([k, v]) => [k, base.get(k) === v || adapters.get(k) === v ? v.clone() : v]),
    );
  });
  return new Map(Object.entries(obj));
}
