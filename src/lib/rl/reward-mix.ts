/**
 * The return an episode is trained on, as the seed's final reward (seed 000 §4.1): a weighted sum
 * of its quality (the environment's return), its efficiency (the share of the context it did not
 * write) and its resource use (the share of the slot's sandbox budget it left). The weights are
 * `LearnerConfig.rewardQuality`, `rewardEfficiency` and `rewardResource` (the seed's 0.6 / 0.3 /
 * 0.1; the default 1 / 0 / 0 trains on the environment's return alone).
 */
import type { LearnerConfig } from './learner-config';

export type RewardMix = Pick<LearnerConfig, 'rewardQuality' | 'rewardEfficiency' | 'rewardResource'>;

/** What one episode brings to the mix. */
export interface EpisodeUse {
  /** The environment's return. */
  quality: number;
  /** Tokens the policy wrote. */
  tokens: number;
  /** Wall ms of its sandbox calls (0 for a result the cache answered). */
  sandboxMs: number;
}

/** Tokens the policy wrote in a trajectory. */
export function ownedTokens(t: { owned: readonly number[] }): number {
  return t.owned.reduce((n, o) => n + (o ? 1 : 0), 0);
}

/** Whether the mix changes anything: any weight but quality's 1. */
export function mixes(w: RewardMix): boolean {
  return w.rewardQuality !== 1 || w.rewardEfficiency !== 0 || w.rewardResource !== 0;
}

/**
 * quality·q + efficiency·(1 − tokens / context) + resource·(1 − sandbox ms / budget), each share
 * floored at 0; with no budget (0) the resource term is 1 for every episode.
 */
export function mixedReturn(use: EpisodeUse, w: RewardMix, contextLength: number, budgetMs: number): number {
  const efficiency = 1 - Math.min(1, use.tokens / Math.max(1, contextLength));
  const resource = budgetMs > 0 ? 1 - Math.min(1, use.sandboxMs / budgetMs) : 1;
  return w.rewardQuality * use.quality + w.rewardEfficiency * efficiency + w.rewardResource * resource;
}
