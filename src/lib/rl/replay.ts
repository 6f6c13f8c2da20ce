import type { Rng } from '../random';
import { DEFAULT_REPLAY, type ReplayConfig } from './replay-config';

/** One drawn item with its importance weight (1 in FIFO mode). */
export interface Drawn<T> {
  item: T;
  key: number;
  weight: number;
}

interface Slot<T> {
  key: number;
  item: T;
  priority: number;
}

/**
 * The in-memory path of the replay buffer (IndexedDB holds the durable copy): items keyed by a
 * number, in arrival order.
 */
export class ReplayBuffer<T> {
  private slots: Slot<T>[] = [];
  private draws = 0;
  private maxPriority = 1;

  constructor(readonly config: ReplayConfig = DEFAULT_REPLAY) {
    if (!Number.isInteger(config.capacity) || config.capacity < 1)
      throw new Error(`replay capacity must be a positive integer, got ${config.capacity}`);
    if (!(config.alpha >= 0)) throw new Error(`replay alpha must be ≥ 0, got ${config.alpha}`);
    if (!(config.beta0 >= 0 && config.beta0 <= 1))
      throw new Error(`replay beta0 must be in [0, 1], got ${config.beta0}`);
  }

  get size(): number {
    return this.slots.length;
  }

  /** Items in arrival order. */
  items(): T[] {
    return this.slots.map((s) => s.item);
  }

  /** Current β (annealed from `beta0` to 1 over `betaDraws` draws). */
  get beta(): number {
    const { beta0, betaDraws } = this.config;
    return Math.min(1, beta0 + ((1 - beta0) * this.draws) / Math.max(1, betaDraws));
  }

  /**
   * Adds an item with the largest priority seen so far (a new item is drawn soon). Returns the
   * items pushed out when the buffer was full.
   */
  add(key: number, item: T, priority?: number): T[] {
    const p = priority ?? this.maxPriority;
    this.maxPriority = Math.max(this.maxPriority, p);
    this.slots.push({ key, item, priority: p });
    const over = this.slots.length - this.config.capacity;
    return over > 0 ? this.slots.splice(0, over).map((s) => s.item) : [];
  }

  /** Puts items back at the front, in order (a batch the trainer could not finish). */
  unshift(entries: readonly { key: number; item: T }[]): void {
    const known = new Set(this.slots.map((s) => s.key));
    const fresh = entries.filter((e) => !known.has(e.key));
    this.slots.unshift(...fresh.map((e) => ({ ...e, priority: this.maxPriority })));
  }

  /** Removes and returns every item `stale` says is too old. */
  removeWhere(stale: (item: T) => boolean): T[] {
    const out: T[] = [];
    this.slots = this.slots.filter((s) => {
      if (!stale(s.item)) return true;
      out.push(s.item);
      return false;
    });
    return out;
  }

  /** Sets an item's priority (e.g. |advantage| after a step); unknown keys are ignored. */
  setPriority(key: number, priority: number): void {
    const s = this.slots.find((x) => x.key === key);
    if (!s) return;
    s.priority = Math.max(0, priority);
    this.maxPriority = Math.max(this.maxPriority, s.priority);
  }

  /**
   * Draws `n` distinct items, or null when fewer are held. FIFO: the oldest, removed from the
   * buffer. Prioritized: by P(i) ∝ (p_i + ε)^α without replacement, left in the buffer, each
   * with weight (N·P(i))^−β normalised by the largest weight of the draw.
   */
  draw(n: number, rng: Rng): Drawn<T>[] | null {
    if (n < 1 || this.slots.length < n) return null;
    if (this.config.mode === 'fifo') {
      return this.slots.splice(0, n).map((s) => ({ item: s.item, key: s.key, weight: 1 }));
    }
    const probs = this.probabilities();
    const N = this.slots.length;
    const left = probs.slice();
    const picked: number[] = [];
    for (let k = 0; k < n; k++) {
      let total = 0;
      for (const p of left) total += p;
      let u = rng.next() * total;
      let chosen = -1;
      for (let i = 0; i < left.length; i++) {
        if ((left[i] ?? 0) <= 0) continue;
        chosen = i;
        u -= left[i] ?? 0;
        if (u <= 0) break;
      }
      picked.push(chosen);
      left[chosen] = 0;
    }
    const beta = this.beta;
    const raw = picked.map((i) => (N * (probs[i] ?? 0)) ** -beta);
    const maxW = Math.max(...raw);
    this.draws += 1;
    return picked.map((i, k) => {
      const s = this.slots[i] as Slot<T>;
      return { item: s.item, key: s.key, weight: (raw[k] ?? 0) / maxW };
    });
  }

  /** P(i) of every held item, in arrival order (prioritized mode's sampling distribution). */
  probabilities(): number[] {
    const { alpha, epsilon } = this.config;
    const scaled = this.slots.map((s) => (s.priority + epsilon) ** alpha);
    const total = scaled.reduce((a, b) => a + b, 0);
    return scaled.map((x) => x / total);
  }
}
