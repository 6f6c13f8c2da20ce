/**
 * How the learner turns a batch of episodes into an update: the run config's `learner` slice
 * (DESIGN §5, §11). CleanRL's `Args` for PPO: every hyperparameter of the update, a doc line each.
 */
export interface LearnerConfig {
  /**
   * Policy loss: `decoupled` (AReaL: clip against the proximal policy, weighted by
   * π_prox/π_behav), `ppo` (clip against the behaviour policy), or `pg` (−A·log π, the trainer
   * check's imitation smoke test; a run refuses it).
   */
  loss: 'pg' | 'ppo' | 'decoupled';
  /**
   * Advantage estimator: group-relative outcome (RLOO, GRPO), per-token GAE with the value head,
   * or per-turn credit (`turn`: each program scored on its own tests, a baseline per task and turn).
   */
  estimator: 'rloo' | 'grpo' | 'gae' | 'turn';
  /** Estimator `turn`: weight of the bonus for a turn that passes more tests than the one before. */
  turnBonus: number;
  /** GAE discount γ (estimator `gae`). */
  gamma: number;
  /** GAE λ (estimator `gae`). */
  lambda: number;
  /** Distinct tasks (groups) per training batch: B of the staleness rule. */
  tasksPerBatch: number;
  /** Episodes per task in a batch (the group of GRPO and RLOO). */
  groupSize: number;
  /**
   * Optimiser steps per batch (PPO epochs). π_prox is the policy before the first step, held
   * fixed: after the first step π_θ moves away from it and the clip bounds each token's ratio.
   */
  updatesPerBatch: number;
  /** Adam's learning rate at version 0 (the schedule below lowers it). */
  learningRate: number;
  /**
   * Versions over which the learning rate halves (0: constant), down to a tenth of
   * `learningRate`; Adam keeps its moments as the rate changes.
   */
  lrHalfLife: number;
  /**
   * The gradient's global norm is clipped to this before each step (0.5, CleanRL's). Far above the
   * norms a run reaches (1 000), it is off: standard PPO's unbounded w·A then reaches the step.
   */
  maxGradNorm: number;
  /** PPO clip range ε of the ratio. */
  clipEps: number;
  /** Decoupled PPO: tokens with w = π_prox/π_behav above this are masked. */
  wCap: number;
  /** Weight of the value loss ½(V − R)². */
  valueCoef: number;
  /** Weight of the entropy bonus. */
  entropyCoef: number;
  /** Batch length in tokens: at most the policy's context. */
  contextLength: number;
}

export const DEFAULT_LEARNER: LearnerConfig = {
  loss: 'decoupled',
  estimator: 'rloo',
  turnBonus: 0.5,
  gamma: 1,
  lambda: 0.95,
  tasksPerBatch: 4,
  groupSize: 4,
  updatesPerBatch: 1,
  learningRate: 3e-3,
  lrHalfLife: 600,
  maxGradNorm: 0.5,
  clipEps: 0.2,
  wCap: 5,
  valueCoef: 0.5,
  entropyCoef: 0.01,
  contextLength: 64,
};

/** What one trainer is built with: the learner's step hyperparameters and its seed. */
export type TrainerConfig = Pick<
  LearnerConfig,
  'loss' | 'learningRate' | 'maxGradNorm' | 'valueCoef' | 'entropyCoef' | 'clipEps' | 'wCap'
> & {
  /** Seed of parameter initialisation and of synthetic batches. */
  seed: number;
  /** Episodes of the trainer check's synthetic batches (and the backend measurement's). */
  batchSize: number;
};

/** The trainer's slice of a learner config. */
export function trainerConfigOf(learner: LearnerConfig, seed: number): TrainerConfig {
  const { loss, learningRate, maxGradNorm, valueCoef, entropyCoef, clipEps, wCap } = learner;
  return { loss, learningRate, maxGradNorm, valueCoef, entropyCoef, clipEps, wCap, seed, batchSize: 8 };
}

export const DEFAULT_TRAINER_CONFIG: TrainerConfig = trainerConfigOf(DEFAULT_LEARNER, 1);

/** The learning rate of the step that makes version `version + 1`. */
export function scheduledRate(
  cfg: Pick<LearnerConfig, 'learningRate' | 'lrHalfLife'>,
  version: number,
): number {
  if (!(cfg.lrHalfLife > 0)) return cfg.learningRate;
  return cfg.learningRate * Math.max(0.1, 0.5 ** (version / cfg.lrHalfLife));
}
