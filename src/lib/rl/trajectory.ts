import type { Episode, RewardParts } from '../env/episode';
import type { Level } from '../env/suite';
import { PAD, VOCAB_SIZE } from '../env/vocab';
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
  /** Version that wrote each token (−1 for observation and feedback). */
  versions: number[];
  /** The legal-token mask each policy token was sampled under, [tokens, V] (0 rows elsewhere). */
  legal: Uint8Array;
  solved: boolean;
  turns: number;
  /** The episode's return: the sum of its rewards. */
  return: number;
  parts: RewardParts;
}

/** Records behaviour log-probs and versions while episodes run (pass `onToken` to `runEpisodes`). */
export class TrajectoryRecorder {
  /** Per episode: position of each policy token → [log-prob, version, legal mask]. */
  private readonly stamps = new Map<Episode, Map<number, [number, number, Uint8Array]>>();

  /** `version` is stamped on every token recorded until it changes. */
  constructor(public version: number) {}

  readonly onToken = (ep: Episode, _token: number, logProb: number): void => {
    const m = this.stamps.get(ep) ?? new Map<number, [number, number, Uint8Array]>();
    // Called before the token is stepped in: it lands at the current length, under this mask.
    m.set(ep.tokens.length, [logProb, this.version, ep.legalMask()]);
    this.stamps.set(ep, m);
  };

  /** The finished episode as a trajectory. */
  trajectory(ep: Episode, group: string): Trajectory {
    const m = this.stamps.get(ep) ?? new Map<number, [number, number, Uint8Array]>();
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
      versions: ep.tokens.map((_, i) => m.get(i)?.[1] ?? -1),
      legal,
      solved: ep.solved,
      turns: ep.turns.length,
      return: ep.parts.total,
      parts: { ...ep.parts },
    };
  }
}

/**
 * A training batch from trajectories with one advantage each (outcome-level: GRPO or RLOO):
 * position t reads token t and is trained on emitting token t + 1 when the policy wrote it,
 * with that token's behaviour log-prob and legal mask. Rows are padded to `length`; the value
 * target at every position is the episode's return.
 */
export function trajectoryBatch(
  trajs: readonly Trajectory[],
  advantages: readonly number[],
  length: number,
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
  const V = VOCAB_SIZE;
  const behav = batch.behavLogp ?? new Float32Array(0);
  const legal = batch.legal ?? new Uint8Array(0);
  trajs.forEach((tr, b) => {
    if (tr.tokens.length > length)
      throw new Error(`trajectory of ${tr.tokens.length} tokens is longer than the batch length ${length}`);
    const a = advantages[b] ?? 0;
    for (let t = 0; t < tr.tokens.length; t++) {
      const i = b * length + t;
      batch.tokens[i] = tr.tokens[t] ?? PAD;
      batch.returns[i] = tr.return;
      if (t + 1 < tr.tokens.length) {
        batch.actions[i] = tr.tokens[t + 1] ?? PAD;
        if (tr.owned[t + 1]) {
          batch.mask[i] = 1;
          batch.advantages[i] = a;
          // Position t predicts token t + 1: its behaviour log-prob and the mask it was sampled under.
          behav[i] = tr.logProbs[t + 1] ?? 0;
          legal.set(tr.legal.subarray((t + 1) * V, (t + 2) * V), i * V);
        }
      }
    }
  });
  return batch;
}
