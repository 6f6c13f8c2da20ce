import type { Episode, RewardParts } from '../env/episode';
import type { Level } from '../env/suite';
import { PAD, VOCAB_SIZE } from '../env/vocab';
import { gae } from './advantages';
import type { TokenBatch } from './batch';

/**
 * One finished episode as training data (DESIGN §7 `trajectories`): its tokens, which of them the
 * policy wrote, the reward after each, and for each policy token the behaviour log-probability
 * and the policy version that sampled it.
 */
export interface Trajectory {
  taskId: string;
  level: Level;
  /** Episodes of the same task in one batch share a group (GRPO, RLOO). */
  group: string;
  tokens: number[];
  owned: number[];
  rewards: number[];
  /** log π_behav of each token the policy wrote (0 elsewhere). */
  logProbs: number[];
  /** Value estimate of the state each policy token was sampled in (0 elsewhere; for GAE). */
  values: number[];
  /** Version that wrote each token (−1 for observation and feedback). */
  versions: number[];
  /** The legal-token mask each policy token was sampled under, [tokens, V] (0 rows elsewhere). */
  legal: Uint8Array;
  solved: boolean;
  turns: number;
  /** Turns that ended with `<run>` (absent in trajectories recorded before runs were counted). */
  runs?: number;
  /** The episode's return: the sum of its rewards. */
  return: number;
  parts: RewardParts;
  /** A void turn: a run that filled the context (its report never shown) or an internal sandbox failure. */
  voidTurn?: true;
}

/** Whether a finished episode had a turn that gave the policy nothing to read (`Trajectory.voidTurn`). */
export function hasVoidTurn(ep: Pick<Episode, 'stop' | 'turns'>): boolean {
  return ep.stop === 'context' || ep.turns.some((t) => t.error === 'internal');
}

/** Records behaviour log-probs and versions while episodes run (pass `onToken` to `runEpisodes`). */
/**
 * What a preempted episode had played: the policy's tokens in order with each one's log-prob,
 * version and value. Replayed through a fresh episode they rebuild it (the environment is
 * deterministic), the feedback tokens included.
 */
export interface EpisodePrefix {
  tokens: number[];
  logProbs: number[];
  versions: number[];
  values: number[];
}

export class TrajectoryRecorder {
  /** Per episode: position of each policy token → [log-prob, version, legal mask, value]. */
  private readonly stamps = new Map<Episode, Map<number, [number, number, Uint8Array, number]>>();

  /** `version` is stamped on every token recorded until it changes. */
  constructor(public version: number) {}

  readonly onToken = (ep: Episode, _token: number, logProb: number, value: number): void => {
    const m = this.stamps.get(ep) ?? new Map<number, [number, number, Uint8Array, number]>();
    // Called before the token is stepped in: it lands at the current length, under this mask.
    m.set(ep.tokens.length, [logProb, this.version, ep.legalMask(), value]);
    this.stamps.set(ep, m);
  };

  /**
   * Stamps the token about to be stepped in with what an earlier play recorded for it (a
   * preempted episode's prefix replayed): its log-prob, value and the version that wrote it.
   */
  restore(ep: Episode, logProb: number, version: number, value: number): void {
    const m = this.stamps.get(ep) ?? new Map<number, [number, number, Uint8Array, number]>();
    m.set(ep.tokens.length, [logProb, version, ep.legalMask(), value]);
    this.stamps.set(ep, m);
  }

  /** The policy tokens `ep` wrote so far with their stamps, in order (a preempted episode's prefix). */
  prefix(ep: Episode): EpisodePrefix {
    const m = this.stamps.get(ep);
    const out: EpisodePrefix = { tokens: [], logProbs: [], versions: [], values: [] };
    ep.owned.forEach((o, pos) => {
      if (!o) return;
      const s = m?.get(pos);
      out.tokens.push(ep.tokens[pos] ?? 0);
      out.logProbs.push(s?.[0] ?? 0);
      out.versions.push(s?.[1] ?? -1);
      out.values.push(s?.[3] ?? 0);
    });
    return out;
  }

  /** Drops what was recorded for an episode (finished and taken, or aborted). */
  forget(ep: Episode): void {
    this.stamps.delete(ep);
  }

  /** The finished episode as a trajectory. */
  trajectory(ep: Episode, group: string): Trajectory {
    const m = this.stamps.get(ep) ?? new Map<number, [number, number, Uint8Array, number]>();
    const legal = new Uint8Array(ep.tokens.length * VOCAB_SIZE);
    for (const [pos, [, , mask]] of m) legal.set(mask, pos * VOCAB_SIZE);
    return {
      taskId: ep.task.id,
      level: ep.task.level,
      group,
      tokens: [...ep.tokens],
      owned: [...ep.owned],
      rewards: [...ep.rewards],
      logProbs: ep.tokens.map((_, i) => m.get(i)?.[0] ?? 0),
      values: ep.tokens.map((_, i) => m.get(i)?.[3] ?? 0),
      versions: ep.tokens.map((_, i) => m.get(i)?.[1] ?? -1),
      legal,
      solved: ep.solved,
      turns: ep.turns.length,
      runs: ep.runs,
      return: ep.parts.total,
      parts: { ...ep.parts },
      ...(hasVoidTurn(ep) ? { voidTurn: true as const } : {}),
    };
  }
}

/** Per-token advantages and value targets of one trajectory, indexed like its tokens (GAE). */
export interface PerToken {
  advantages: readonly number[];
  returns: readonly number[];
}

/**
 * Per-token GAE(γ, λ) over the policy's own tokens of each trajectory (a token is a step; the
 * rewards sit on control tokens), with advantages normalised over the whole batch.
 */
export function gaeAdvantages(trajs: readonly Trajectory[], gamma: number, lambda: number): PerToken[] {
  const per = trajs.map((tr) => {
    const idx = tr.owned.flatMap((o, i) => (o ? [i] : []));
    const { advantages, returns } = gae(
      idx.map((i) => tr.rewards[i] ?? 0),
      idx.map((i) => tr.values[i] ?? 0),
      gamma,
      lambda,
    );
    return { idx, advantages, returns };
  });
  const all = per.flatMap((p) => p.advantages);
  const mean = all.reduce((a, b) => a + b, 0) / Math.max(1, all.length);
  const std = Math.sqrt(all.reduce((a, x) => a + (x - mean) ** 2, 0) / Math.max(1, all.length));
  return per.map(({ idx, advantages, returns }, k) => {
    const n = trajs[k]?.tokens.length ?? 0;
    const adv = new Array<number>(n).fill(0);
    const ret = new Array<number>(n).fill(0);
    idx.forEach((i, j) => {
      adv[i] = ((advantages[j] ?? 0) - mean) / (std + 1e-8);
      ret[i] = returns[j] ?? 0;
    });
    return { advantages: adv, returns: ret };
  });
}

/**
 * A training batch from trajectories with one advantage each (outcome-level: GRPO or RLOO) or
 * per-token advantages and returns (GAE):
 * position t reads token t and is trained on emitting token t + 1 when the policy wrote it,
 * with that token's behaviour log-prob and legal mask. Rows are padded to `length`; the value
 * target at every position is the episode's return. `rowWeights` (prioritized replay's importance
 * weight of each row) fill `weights` when one of them is not 1.
 */
export function trajectoryBatch(
  trajs: readonly Trajectory[],
  advantages: readonly (number | PerToken)[],
  length: number,
  rowWeights: readonly number[] = [],
): TokenBatch {
  const B = trajs.length;
  const n = B * length;
  const batch: TokenBatch = {
    batch: B,
    length,
    tokens: new Int32Array(n).fill(PAD),
    actions: new Int32Array(n).fill(PAD),
    mask: new Float32Array(n),
    advantages: new Float32Array(n),
    returns: new Float32Array(n),
    behavLogp: new Float32Array(n),
    legal: new Uint8Array(n * VOCAB_SIZE),
    vocab: VOCAB_SIZE,
  };
  if (rowWeights.length !== 0 && rowWeights.length !== B)
    throw new Error(`${rowWeights.length} row weights for a batch of ${B} rows`);
  if (rowWeights.some((w) => w !== 1)) {
    const weights = new Float32Array(n).fill(1);
    rowWeights.forEach((w, b) => weights.fill(w, b * length, (b + 1) * length));
    batch.weights = weights;
  }
  const V = VOCAB_SIZE;
  const behav = batch.behavLogp ?? new Float32Array(0);
  const legal = batch.legal ?? new Uint8Array(0);
  trajs.forEach((tr, b) => {
    if (tr.tokens.length > length)
      throw new Error(`trajectory of ${tr.tokens.length} tokens is longer than the batch length ${length}`);
    const a = advantages[b] ?? 0;
    // A trajectory stored before the vocabulary grew has rows of the older, smaller size.
    const W = tr.tokens.length ? tr.legal.length / tr.tokens.length : V;
    // Per-token advantages/returns are indexed by the token they belong to; position t predicts t + 1.
    const advAt = (i: number) => (typeof a === 'number' ? a : (a.advantages[i] ?? 0));
    const retAt = (i: number) => (typeof a === 'number' ? tr.return : (a.returns[i] ?? tr.return));
    for (let t = 0; t < tr.tokens.length; t++) {
      const i = b * length + t;
      batch.tokens[i] = tr.tokens[t] ?? PAD;
      batch.returns[i] = tr.return;
      if (t + 1 < tr.tokens.length) {
        batch.actions[i] = tr.tokens[t + 1] ?? PAD;
        if (tr.owned[t + 1]) {
          batch.mask[i] = 1;
          batch.advantages[i] = advAt(t + 1);
          batch.returns[i] = retAt(t + 1);
          // Position t predicts token t + 1: its behaviour log-prob and the mask it was sampled under.
          behav[i] = tr.logProbs[t + 1] ?? 0;
          legal.set(tr.legal.subarray((t + 1) * W, (t + 1) * W + Math.min(W, V)), i * V);
        }
      }
    }
  });
  return batch;
}
