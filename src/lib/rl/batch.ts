/**
 * A training batch of token sequences as flat typed arrays (they cross threads as
 * transferables). Every per-position array is [batch, length], row-major.
 */
export interface TokenBatch {
  /** Number of sequences (B). */
  batch: number;
  /** Positions per sequence (T). */
  length: number;
  /** Model input at each position, [B, T]. */
  tokens: Int32Array;
  /** Token emitted at each position (the next token), [B, T]. */
  actions: Int32Array;
  /** 1 where the action was the policy's own choice, 0 for observation or padding, [B, T]. */
  mask: Float32Array;
  /** Advantage of each action, [B, T]. */
  advantages: Float32Array;
  /** Return target for the value head, [B, T]. */
  returns: Float32Array;
  /** log π_behav of each action, recorded by the rollout worker when it sampled, [B, T] (PPO losses). */
  behavLogp?: Float32Array;
  /** 1 for each token legal at each position (the env's mask the policy sampled under), [B, T, V]. */
  legal?: Uint8Array;
  /** Vocabulary size V of `legal`. */
  vocab?: number;
  /**
   * Importance weight of each position's sample, [B, T] (prioritized replay; 1 where absent).
   * It scales the value loss; the advantages carry it already, which scales the policy loss.
   */
  weights?: Float32Array;
}

/**
 * What a PPO update reads of a batch, whatever the policy's input is made of (`rl/update.ts`): the
 * per-position arrays. A custom environment's batch is one row (B = 1) of its N steps.
 */
export type PpoBatch = Omit<TokenBatch, 'tokens'>;

/** Throws when the arrays of `b` do not all have B·T entries or the mask selects nothing. */
export function validateBatch(b: PpoBatch & Partial<Pick<TokenBatch, 'tokens'>>): void {
  const n = b.batch * b.length;
  for (const key of ['actions', 'mask', 'advantages', 'returns'] as const) {
    if (b[key].length !== n) throw new Error(`batch.${key} has ${b[key].length} entries, expected ${n}`);
  }
  for (const key of ['tokens', 'behavLogp', 'weights'] as const) {
    const a = b[key];
    if (a && a.length !== n) throw new Error(`batch.${key} has ${a.length} entries, expected ${n}`);
  }
  if (b.legal && b.legal.length !== n * (b.vocab ?? 0))
    throw new Error(`batch.legal has ${b.legal.length} entries, expected ${n} × vocab ${b.vocab}`);
  if (!b.mask.some((m) => m > 0)) throw new Error('batch.mask selects no position');
}

/**
 * The legal-token mask of `b` over a policy's `V` tokens, [B, T, V]: a policy stored before the
 * vocabulary grew (its new tokens are appended last) trains on batches of the larger one. Throws
 * when a token the policy lacks was legal, or when the policy has more tokens than the batch.
 */
export function legalFor(b: PpoBatch, V: number): Uint8Array | undefined {
  const W = b.vocab ?? V;
  if (!b.legal || W === V) return b.legal;
  if (W < V) throw new Error(`batch.legal covers ${W} tokens, the policy has ${V}`);
  const n = b.batch * b.length;
  const out = new Uint8Array(n * V);
  for (let i = 0; i < n; i++) {
    const row = b.legal.subarray(i * W, (i + 1) * W);
    if (row.subarray(V).some((m) => m !== 0))
      throw new Error(`a token past the policy's vocabulary of ${V} was legal at position ${i}`);
    out.set(row.subarray(0, V), i * V);
  }
  return out;
}
