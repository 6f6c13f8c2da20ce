/** The replay buffer's settings (`RunConfig.replay`), apart from the buffer itself. */
/** How the trainer draws its batches from the replay buffer (DESIGN §5, seed 001). */
export interface ReplayConfig {
  /**
   * `fifo`: oldest first, each item consumed once (the default). `prioritized`: items stay in
   * the buffer (up to `capacity`) and a batch is drawn with P(i) ∝ p_i^α, weighted by
   * (N·P(i))^−β / max to undo the bias; the decoupled loss handles the policy lag.
   */
  mode: 'fifo' | 'prioritized';
  /** Items held at most; the oldest go first when it is full. */
  capacity: number;
  /** Priority exponent α (0: uniform). */
  alpha: number;
  /** Importance-weight exponent β at the first draw; annealed linearly to 1. */
  beta0: number;
  /** Draws over which β reaches 1. */
  betaDraws: number;
  /** Added to every priority so no item has probability 0. */
  epsilon: number;
}

export const DEFAULT_REPLAY: ReplayConfig = {
  mode: 'fifo',
  capacity: 256,
  alpha: 0.6,
  beta0: 0.4,
  betaDraws: 200,
  epsilon: 0.01,
};
