import * as tf from '@tensorflow/tfjs';
import type { Episode } from '../env/episode';
import type { TokenAgent } from '../env/evaluate';
import { PAD } from '../env/vocab';
import { Rng } from '../rl/random';
import type { ModelArgs } from './config';
import { forward, type Params } from './model';

/** How the policy picks tokens. */
export interface SamplerOptions {
  /** Argmax of the masked distribution (evaluation) instead of sampling. */
  greedy: boolean;
  /** Softmax temperature when sampling (1 = the policy's own distribution). */
  temperature: number;
  /** Seed of the sampling stream. */
  seed: number;
  /**
   * Rows per forward pass: batches are padded to this many rows and to the full context, so
   * every pass has one shape (WebGPU compiles a shader per shape).
   */
  rows: number;
}

export const DEFAULT_SAMPLER: SamplerOptions = { greedy: false, temperature: 1, seed: 1, rows: 32 };

/** A chosen token with its log-probability under the (masked) policy: π_behav of DESIGN §5. */
export interface Sampled {
  token: number;
  logProb: number;
}

/**
 * Picks from `logits` restricted to `mask`: log-softmax over the legal tokens only (the
 * policy head's mask, DESIGN §4), then argmax or a temperature sample.
 */
export function pickMasked(
  logits: ArrayLike<number>,
  mask: Uint8Array,
  opts: { greedy: boolean; temperature: number },
  rng: Rng,
): Sampled {
  let max = -Infinity;
  for (let i = 0; i < mask.length; i++) if (mask[i] && (logits[i] ?? 0) > max) max = logits[i] ?? 0;
  if (max === -Infinity) throw new Error('no legal token to pick');
  let z = 0;
  for (let i = 0; i < mask.length; i++) if (mask[i]) z += Math.exp((logits[i] ?? 0) - max);
  const logZ = max + Math.log(z);
  const logProb = (i: number) => (logits[i] ?? 0) - logZ;
  if (opts.greedy) {
    let best = -1;
    for (let i = 0; i < mask.length; i++)
      if (mask[i] && (best < 0 || (logits[i] ?? 0) > (logits[best] ?? 0))) best = i;
    return { token: best, logProb: logProb(best) };
  }
  const t = opts.temperature;
  let zt = 0;
  for (let i = 0; i < mask.length; i++) if (mask[i]) zt += Math.exp(((logits[i] ?? 0) - max) / t);
  let u = rng.next() * zt;
  let last = -1;
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i]) continue;
    last = i;
    u -= Math.exp(((logits[i] ?? 0) - max) / t);
    if (u <= 0) return { token: i, logProb: logProb(i) };
  }
  return { token: last, logProb: logProb(last) };
}

/**
 * The transformer policy as a token agent: one forward pass over the whole context per token
 * (the KV cache of issue 5 replaces this in rollout workers), logits masked to the legal tokens.
 */
export class PolicyAgent implements TokenAgent {
  private readonly rng: Rng;
  /** Log-probabilities of the tokens chosen by the last `choose`. */
  lastLogProbs: number[] = [];

  constructor(
    readonly name: string,
    private readonly params: Params,
    private readonly args: ModelArgs,
    private readonly opts: SamplerOptions = DEFAULT_SAMPLER,
  ) {
    this.rng = new Rng(opts.seed);
  }

  async choose(episodes: readonly Episode[]): Promise<number[]> {
    const out: Sampled[] = [];
    for (let i = 0; i < episodes.length; i += this.opts.rows) {
      out.push(...(await this.chooseRows(episodes.slice(i, i + this.opts.rows))));
    }
    this.lastLogProbs = out.map((s) => s.logProb);
    return out.map((s) => s.token);
  }

  private async chooseRows(episodes: readonly Episode[]): Promise<Sampled[]> {
    const R = this.opts.rows;
    const T = this.args.contextLength;
    const V = this.args.vocabSize;
    const ids = new Int32Array(R * T).fill(PAD);
    const last = new Int32Array(R * 2);
    episodes.forEach((ep, r) => {
      if (ep.tokens.length > T)
        throw new Error(`episode of ${ep.tokens.length} tokens exceeds the policy's context ${T}`);
      ids.set(ep.tokens, r * T);
      last[r * 2] = r;
      last[r * 2 + 1] = ep.tokens.length - 1;
    });
    const next = tf.tidy(() => {
      const tokens = tf.tensor2d(ids, [R, T], 'int32'); // [R, T]
      const { logits } = forward(this.params, this.args, tokens); // [R, T, V]
      return tf.gatherND(logits, tf.tensor2d(last, [R, 2], 'int32')) as tf.Tensor2D; // [R, V]
    });
    const data = await next.data();
    next.dispose();
    return episodes.map((ep, r) =>
      pickMasked(data.subarray(r * V, (r + 1) * V), ep.legalMask(), this.opts, this.rng),
    );
  }
}
