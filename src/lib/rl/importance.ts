/**
 * Per-tensor parameter importance (seed 000 §2.3), for the update strategies (`strategy.ts`) and
 * the page's heat map of the policy's tensors over versions. Two measures, each normalised across
 * tensors by dividing by the largest (the seed's normalisation: the most important tensor is 1):
 *   - the seed's: 0.4·variance + 0.3·mean|w| + 0.3·‖w‖ of the tensor's values;
 *   - gradient-based: the running mean over steps of |g·w| (g·w summed over the tensor: the
 *     first-order change of the loss were the tensor zeroed), for comparison.
 */
import * as tf from '@tensorflow/tfjs';

/** The seed's weights of its three statistics. */
export const SEED_IMPORTANCE_WEIGHTS = { variance: 0.4, magnitude: 0.3, norm: 0.3 } as const;

/** Importance of each tensor by name, normalised: the largest is 1 (all 0 when every one is 0). */
export type Importance = Map<string, number>;

/**
 * The seed's raw (unnormalised) importance of one tensor's values: 0.4·var + 0.3·mean|w| + 0.3·‖w‖,
 * the variance over all values (numpy's `np.var`, population). A plain-number reference for tests.
 */
export function seedImportanceOf(values: ArrayLike<number>): number {
  const n = values.length;
  if (n === 0) return 0;
  let sum = 0;
  let abs = 0;
  let sq = 0;
  for (let i = 0; i < n; i++) {
    const w = values[i] ?? 0;
    sum += w;
    abs += Math.abs(w);
    sq += w * w;
  }
  const mean = sum / n;
  let variance = 0;
  for (let i = 0; i < n; i++) variance += ((values[i] ?? 0) - mean) ** 2;
  variance /= n;
  const { variance: a, magnitude: b, norm: c } = SEED_IMPORTANCE_WEIGHTS;
  return a * variance + b * (abs / n) + c * Math.sqrt(sq);
}

/** `raw` divided by its largest value (the seed's normalisation); unchanged when none is above 0. */
export function normalised(raw: ReadonlyMap<string, number>): Importance {
  const max = Math.max(0, ...raw.values());
  return new Map([...raw].map(([k, v]) => [k, max > 0 ? v / max : v]));
}

/**
 * The seed's importance of every tensor of `tensors`, normalised across them. Computed on the
 * tensors' backend, one readback for all.
 */
export async function seedImportance(tensors: ReadonlyMap<string, tf.Tensor>): Promise<Importance> {
  const names = [...tensors.keys()];
  if (names.length === 0) return new Map();
  const { variance: a, magnitude: b, norm: c } = SEED_IMPORTANCE_WEIGHTS;
  const scores = tf.tidy(() =>
    tf.stack(
      [...tensors.values()].map((t) => {
        const w = t.flatten(); // [n]
        const { variance } = tf.moments(w);
        const magnitude = w.abs().mean();
        const norm = w.square().sum().sqrt();
        return variance.mul(a).add(magnitude.mul(b)).add(norm.mul(c)); // []
      }),
    ),
  ); // [tensors]
  const raw = Array.from(await scores.data());
  scores.dispose();
  return normalised(new Map(names.map((n, i) => [n, raw[i] ?? 0])));
}

/**
 * The gradient-based importance: per tensor the mean over the steps observed since the last read
 * of |Σ g·w| (its gradient and its value before the step). Accumulated on the backend, read back
 * only when asked (every N versions), so a step pays a few small ops per tensor and no readback.
 */
export class GradientImportance {
  private sums = new Map<string, tf.Variable>();
  private counts = new Map<string, number>();
  /** Each tensor's running mean as last read (a tensor not observed since keeps its value). */
  private carried = new Map<string, number>();

  /** Adds one step's |Σ g·w| of each tensor trained; `grads` and `values` are keyed alike. */
  observe(grads: ReadonlyMap<string, tf.Tensor>, values: ReadonlyMap<string, tf.Tensor>): void {
    for (const [name, g] of grads) {
      const w = values.get(name);
      if (!w) continue;
      const sum = this.sums.get(name);
      tf.tidy(() => {
        const x = g.mul(w).sum().abs(); // []
        if (sum) sum.assign(sum.add(x));
        else this.sums.set(name, tf.variable(x, false));
      });
      this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
    }
  }

  /** Tensors observed since the last read. */
  get size(): number {
    return this.sums.size;
  }

  /**
   * The running mean of each tensor observed since the last read, normalised across them, and
   * starts a new window. Empty when nothing was observed.
   */
  async read(): Promise<Importance> {
    const names = [...this.sums.keys()];
    if (names.length === 0) return new Map();
    const packed = tf.tidy(() => tf.stack(names.map((n) => this.sums.get(n) as tf.Variable))); // [tensors]
    const sums = Array.from(await packed.data());
    packed.dispose();
    const raw = new Map(names.map((n, i) => [n, (sums[i] ?? 0) / Math.max(1, this.counts.get(n) ?? 1)]));
    this.reset();
    for (const [n, v] of raw) this.carried.set(n, v);
    return normalised(raw);
  }

  /** Whether a read has measured any tensor yet (`latest` is not null). */
  get measured(): boolean {
    return this.carried.size > 0;
  }

  /**
   * Every tensor's running mean as last read, normalised across them: those observed in the last
   * window and, for any left out of it, their value from an earlier one. Null before a first read.
   */
  latest(): Importance | null {
    return this.carried.size > 0 ? normalised(this.carried) : null;
  }

  private reset(): void {
    tf.dispose([...this.sums.values()]);
    this.sums.clear();
    this.counts.clear();
  }

  dispose(): void {
    this.reset();
  }
}

/** An importance as a plain record, rounded to 4 digits (what a report or a stored version keeps). */
export function importanceRecord(imp: ReadonlyMap<string, number>): Record<string, number> {
  return Object.fromEntries([...imp].map(([k, v]) => [k, Math.round(v * 1e4) / 1e4]));
}
