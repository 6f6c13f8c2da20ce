import * as tf from '@tensorflow/tfjs';
import type { Episode } from '../env/episode';
import type { TokenAgent } from '../env/evaluate';
import { PAD } from '../env/vocab';
import { Rng } from '../random';
import type { ModelArgs } from './config';
import { decodeStep, forward, type LayerKV, type Weights } from './model';

/** How the policy picks tokens. */
export interface SamplerOptions {
  /** Argmax of the masked distribution (evaluation) instead of sampling. */
  greedy: boolean;
  /** Softmax temperature when sampling (1 = the policy's own distribution). */
  temperature: number;
  /** Seed of the sampling stream. */
  seed: number;
  /**
   * Rows per forward pass: batches are padded to this many rows and (uncached) to the full
   * context, so that passes have few shapes (WebGPU compiles a shader per shape).
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
 * policy head's mask, DESIGN §4), then argmax or a temperature sample. A legal logit that is not
 * finite (NaN or ±∞: weights gone bad) throws: no token is picked with a NaN log-prob.
 */
export function pickMasked(
  logits: ArrayLike<number>,
  mask: Uint8Array,
  opts: { greedy: boolean; temperature: number },
  rng: Rng,
): Sampled {
  let max = -Infinity;
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i]) continue;
    const x = logits[i] ?? 0;
    if (!Number.isFinite(x)) throw new Error(`the policy's logits are not finite (token ${i}: ${x})`);
    if (x > max) max = x;
  }
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
  // The behaviour log-prob is the one of the distribution sampled from: tempered when t ≠ 1.
  const logZt = Math.log(zt);
  const sampledLogProb = (i: number) => ((logits[i] ?? 0) - max) / t - logZt;
  let u = rng.next() * zt;
  let last = -1;
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i]) continue;
    last = i;
    u -= Math.exp(((logits[i] ?? 0) - max) / t);
    if (u <= 0) return { token: i, logProb: sampledLogProb(i) };
  }
  return { token: last, logProb: sampledLogProb(last) };
}

/**
 * The transformer policy as a token agent: one forward pass over the whole context per token
 * (`CachedPolicyAgent` replaces this in rollout workers), logits masked to the legal tokens.
 */
export class PolicyAgent implements TokenAgent {
  private readonly rng: Rng;
  /** Log-probabilities of the tokens chosen by the last `choose`. */
  lastLogProbs: number[] = [];

  constructor(
    readonly name: string,
    private readonly params: Weights,
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

/**
 * The transformer policy with a KV cache (DESIGN §4): one prefill of the whole
 * batch, then one `decodeStep` per token. Each row ingests its episode's next uncached token per
 * step (feedback tokens after a `<run>` take one step each), and a row samples only once its
 * episode is fully cached. `invalidate()` (new weights) makes the next `choose` prefill again.
 */
export class CachedPolicyAgent implements TokenAgent {
  private readonly rng: Rng;
  lastLogProbs: number[] = [];
  /** Model calls made: prefills and decode steps (a metric for tests and the bench). */
  prefills = 0;
  steps = 0;
  private cache: LayerKV[] | null = null;
  private rows = new Map<Episode, number>();
  /** Tokens of each row held in the cache. */
  private cached: number[] = [];
  /** Logits at each row's last cached token, [rows × V]. */
  private logits: Float32Array = new Float32Array(0);
  /** Value estimate at each row's last cached token, [rows]. */
  private values: Float32Array = new Float32Array(0);
  /** Value estimates of the states the last `choose` sampled from (for GAE). */
  lastValues: number[] = [];

  constructor(
    readonly name: string,
    private params: Weights,
    private args: ModelArgs,
    private readonly opts: SamplerOptions = DEFAULT_SAMPLER,
  ) {
    this.rng = new Rng(opts.seed);
  }

  /**
   * New weights (and the model args they were published with, when they differ: a run stored by
   * an older build): the cache is rebuilt from the current context at the next `choose`.
   */
  setParams(params: Weights, args: ModelArgs = this.args): void {
    this.params = params;
    this.args = args;
    this.invalidate();
  }

  invalidate(): void {
    if (this.cache) for (const c of this.cache) tf.dispose([c.k, c.v]);
    this.cache = null;
  }

  /**
   * The next token of each episode. `streams[i]` (when given) samples episode i instead of the
   * agent's one stream: its tokens then do not depend on which other episodes share the batch.
   */
  async choose(episodes: readonly Episode[], streams?: readonly Rng[]): Promise<number[]> {
    if (episodes.length > this.opts.rows)
      throw new Error(`${episodes.length} episodes exceed the agent's ${this.opts.rows} rows`);
    if (!this.cache || episodes.some((e) => !this.rows.has(e))) await this.prefill(episodes);
    const V = this.args.vocabSize;
    for (;;) {
      const pending = episodes.filter((e) => (this.cached[this.row(e)] ?? 0) < e.tokens.length);
      if (pending.length === 0) break;
      await this.step(pending);
    }
    const out = episodes.map((e, i) => {
      const r = this.row(e);
      const rng = streams?.[i] ?? this.rng;
      return pickMasked(this.logits.subarray(r * V, (r + 1) * V), e.legalMask(), this.opts, rng);
    });
    this.lastLogProbs = out.map((s) => s.logProb);
    this.lastValues = episodes.map((e) => this.values[this.row(e)] ?? 0);
    return out.map((s) => s.token);
  }

  private row(e: Episode): number {
    const r = this.rows.get(e);
    if (r === undefined) throw new Error('episode has no cache row');
    return r;
  }

  /**
   * Fills the cache rows of the episodes that have none: every episode's after new weights (the
   * cache was dropped), else only those that joined since the last call (a new job's), in one
   * forward pass over just their tokens. Episodes keep their rows while they play; the rows of
   * those gone (done, aborted) are taken by the newcomers. The pass is as long as the longest
   * newcomer, rounded up to 8 positions, and as wide as their count rounded up to a power of two;
   * on WebGPU and WebGL, which compile a shader for each shape, to 16 positions and at least a
   * quarter of the rows (at most 12 shapes). A causal pass gives the same keys and values at every
   * real position whatever follows, so this equals a full-context prefill of every row (the cache
   * tests check it), at a fraction of its cost. A pass that fails leaves no cache (the next call
   * prefills every row), never a row with another episode's state.
   */
  private async prefill(episodes: readonly Episode[]): Promise<void> {
    try {
      await this.fill(episodes);
    } catch (err) {
      this.invalidate();
      this.rows = new Map();
      throw err;
    }
  }

  private async fill(episodes: readonly Episode[]): Promise<void> {
    const R = this.opts.rows;
    const T = this.args.contextLength;
    const V = this.args.vocabSize;
    const whole = this.cache === null;
    if (whole) this.rows = new Map();
    else for (const e of [...this.rows.keys()]) if (!episodes.includes(e)) this.rows.delete(e);
    const taken = new Set(this.rows.values());
    const free = Array.from({ length: R }, (_, r) => r).filter((r) => !taken.has(r));
    const fresh = episodes.filter((e) => !this.rows.has(e));
    for (const e of fresh)
      if (e.tokens.length > T)
        throw new Error(`episode of ${e.tokens.length} tokens exceeds the policy's context ${T}`);
    fresh.forEach((e, i) => this.rows.set(e, free[i] ?? -1));
    const coarse = ['webgpu', 'webgl'].includes(tf.getBackend());
    const longest = Math.max(1, ...fresh.map((e) => e.tokens.length));
    const grain = coarse ? 16 : 8;
    const L = Math.min(T, Math.ceil(longest / grain) * grain);
    let K = coarse ? Math.max(1, Math.ceil(R / 4)) : 1;
    while (K < fresh.length) K *= 2;
    K = Math.min(K, R);
    const ids = new Int32Array(K * L).fill(PAD);
    const last = new Int32Array(K * 2);
    // Cache row r takes newcomer i where place[r, i] = 1; a row of no newcomer keeps what it had
    // (keep = 1) or, after new weights, nothing. One-hot products and masks copy exactly, and
    // cost far less than gather and concat on the wasm backend.
    const place = new Float32Array(R * K);
    const keep = new Float32Array(R).fill(whole ? 0 : 1);
    fresh.forEach((ep, i) => {
      ids.set(ep.tokens, i * L);
      last[i * 2] = i;
      last[i * 2 + 1] = Math.max(0, ep.tokens.length - 1);
      const r = this.row(ep);
      place[r * K + i] = 1;
      keep[r] = 0;
    });
    const old = this.cache;
    const { next, kv } = tf.tidy(() => {
      const tokens = tf.tensor2d(ids, [K, L], 'int32'); // [K, L]
      const out = forward(this.params, this.args, tokens, true); // logits [K, L, V], values [K, L]
      const at = tf.tensor2d(last, [K, 2], 'int32'); // [K, 2]
      const logits = tf.gatherND(out.logits, at) as tf.Tensor2D; // [K, V]
      const values = tf.gatherND(out.values, at).reshape([K, 1]); // [K, 1]
      const placeK = tf.tensor2d(place, [R, K]); // [R, K]
      const keepR = tf.tensor4d(keep, [R, 1, 1, 1]); // [R, 1, 1, 1]
      const merge = (prev: tf.Tensor4D | undefined, made: tf.Tensor4D): tf.Tensor4D => {
        const [, H, , E] = made.shape;
        const full =
          L < T
            ? made.pad([
                [0, 0],
                [0, 0],
                [0, T - L],
                [0, 0],
              ])
            : made; // [K, H, T, E]
        const placed = tf.matMul(placeK, full.reshape([K, H * T * E])).reshape([R, H, T, E]); // [R, H, T, E]
        return (prev && !whole ? prev.mul(keepR).add(placed) : placed) as tf.Tensor4D; // [R, H, T, E]
      };
      const layers = out.kv.map((c, l) => ({ k: merge(old?.[l]?.k, c.k), v: merge(old?.[l]?.v, c.v) }));
      return { next: tf.concat([logits, values], 1), kv: layers }; // [K, V + 1]
    });
    if (old) for (const c of old) tf.dispose([c.k, c.v]);
    this.cache = kv;
    if (whole) {
      this.cached = new Array<number>(R).fill(0);
      this.logits = new Float32Array(R * V);
      this.values = new Float32Array(R);
    }
    const data = await next.data();
    next.dispose();
    fresh.forEach((ep, i) => {
      const r = this.row(ep);
      this.cached[r] = ep.tokens.length;
      this.logits.set(data.subarray(i * (V + 1), i * (V + 1) + V), r * V);
      this.values[r] = data[i * (V + 1) + V] ?? 0;
    });
    this.prefills += 1;
  }

  /** One decode step: each pending row reads its next uncached token; other rows idle. */
  private async step(pending: readonly Episode[]): Promise<void> {
    const R = this.opts.rows;
    const V = this.args.vocabSize;
    const T = this.args.contextLength;
    if (!this.cache) throw new Error('no cache');
    // As prefill: a token past the context has no position (the clamp below is for idle rows).
    for (const e of pending)
      if (e.tokens.length > T)
        throw new Error(`episode of ${e.tokens.length} tokens exceeds the policy's context ${T}`);
    const tokens = new Int32Array(R).fill(PAD);
    // An idle row writes a PAD at its next free slot (a full row: its last, which it no longer
    // needs): never attended (beyond its position) and overwritten when its real token arrives.
    const positions = Int32Array.from(this.cached, (c) => Math.min(c, T - 1));
    const active = new Set<number>();
    for (const e of pending) {
      const r = this.row(e);
      tokens[r] = e.tokens[this.cached[r] ?? 0] ?? PAD;
      active.add(r);
    }
    const t = tf.tensor1d(tokens, 'int32'); // [R]
    const pos = tf.tensor1d(positions, 'int32'); // [R]
    const out = decodeStep(this.params, this.args, this.cache, t, pos); // logits [R, V], values [R]
    const both = tf.tidy(() => tf.concat([out.logits, out.values.reshape([R, 1])], 1)); // [R, V + 1]
    tf.dispose([t, pos, out.values, out.logits]);
    this.cache = out.cache;
    const data = await both.data();
    both.dispose();
    for (const r of active) {
      this.logits.set(data.subarray(r * (V + 1), r * (V + 1) + V), r * V);
      this.values[r] = data[r * (V + 1) + V] ?? 0;
      this.cached[r] = (this.cached[r] ?? 0) + 1;
    }
    this.steps += 1;
  }

  dispose(): void {
    this.invalidate();
  }
}
