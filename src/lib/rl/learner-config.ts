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
  /**
   * Mean entropy (nats per policy token) below which the loss adds max(0, floor − H) at weight 1,
   * so exploration cannot collapse before the policy revises; 0: off.
   */
  entropyFloor: number;
  /**
   * Leave out of the batch (advantages and loss) episodes with a void turn: a run that filled the
   * context, its report never shown, or a program the sandbox failed on internally.
   */
  dropVoid: boolean;
  /**
   * The return an episode trains on (`rl/reward-mix.ts`, the seed's final reward): this weight on
   * the environment's return, plus the two below. 1 / 0 / 0 (the default) is the return alone; the
   * seed's split is 0.6 / 0.3 / 0.1. The mix applies to the group estimators (rloo, grpo).
   */
  rewardQuality: number;
  /** Weight of efficiency: 1 − the policy's tokens / the context. */
  rewardEfficiency: number;
  /**
   * Weight of resource use: 1 − the episode's sandbox ms / `pipeline.budgetSandboxMs` (a budget
   * must be set). Measured wall time: runs with it are not bit-reproducible.
   */
  rewardResource: number;
  /** Batch length in tokens: at most the policy's context. */
  contextLength: number;
  /**
   * What each update trains, and at what rate (seed 000 §2.4, `rl/strategy.ts`): `full` every
   * parameter; `lora` the adapters of `policy.lora` (a run with `policy.lora` set trains them
   * under `full` too); `frozen` all but the layers chosen below; `adaptive` every parameter at a
   * rate that follows the performance trend; `selective` the tensors whose importance is above
   * `selectiveThreshold`; `gradual` the heads, then one block more from the top down every
   * `gradualEvery` versions, the embeddings last; `auto` the seed's optimize_strategy: full,
   * then selective or adaptive on the performance's trend and stability.
   */
  strategy: UpdateStrategy;
  /** `frozen`: the token and position embeddings stay fixed. */
  freezeEmbeddings: boolean;
  /** `frozen`: the lowest this many transformer blocks stay fixed. */
  frozenBlocks: number;
  /** `frozen`: the final layer norm and the heads (policy, value, copy) stay fixed. */
  freezeHeads: boolean;
  /** `adaptive`: the rate is multiplied by this on a rising trend (the seed's 1.1). */
  adaptiveUp: number;
  /** `adaptive`: the rate is multiplied by this on a falling trend (the seed's 0.9). */
  adaptiveDown: number;
  /** `adaptive`: the rate never goes below this. */
  adaptiveMinRate: number;
  /** `adaptive`: the rate never goes above this. */
  adaptiveMaxRate: number;
  /** `adaptive`: a trend above this is rising, below its negative falling (the seed's 0.01). */
  trendThreshold: number;
  /**
   * The performance is each batch's success share; the current performance is the mean of the
   * newest `trendSpan` batches and the trend that mean less the one of the `trendSpan` before
   * (1: the seed's, the newest less the one before).
   */
  trendSpan: number;
  /** `selective`: a tensor trains when its importance (normalised to the largest) is above this. */
  selectiveThreshold: number;
  /**
   * `selective`: the importance that ranks the tensors: `seed` (of the values, the seed's formula)
   * or `gradient` (the running mean of |Σ g·w| over the steps since it was last measured; the
   * first update trains every tensor to measure it, and a tensor left out keeps its last value).
   */
  selectiveBy: SelectiveImportance;
  /** `gradual`: versions between unfreezing one more block, from the top down. */
  gradualEvery: number;
  /** `auto`: batches the statistics look back over (the seed's performance_window); no switch before it is full. */
  autoWindow: number;
  /** `auto`: the stability 1/(1 + std) a switch to `adaptive` needs (0: the seed's rule, on the trend alone). */
  autoMinStability: number;
  /**
   * Parameter importance per tensor (the seed's and the gradient-based) is measured and reported
   * every this many versions (0: never; `selective` then measures its ranking once, when first needed).
   */
  importanceEvery: number;
}

/** The importances `selective` can rank tensors by (`LearnerConfig.selectiveBy`). */
export const SELECTIVE_IMPORTANCES = ['seed', 'gradient'] as const;
export type SelectiveImportance = (typeof SELECTIVE_IMPORTANCES)[number];

/** The update strategies of `LearnerConfig.strategy`. */
export const UPDATE_STRATEGIES = [
  'full',
  'lora',
  'frozen',
  'adaptive',
  'selective',
  'gradual',
  'auto',
] as const;
export type UpdateStrategy = (typeof UPDATE_STRATEGIES)[number];

/** The learner's fields that say how each update chooses what trains and its rate. */
export const STRATEGY_FIELDS = [
  'strategy',
  'freezeEmbeddings',
  'frozenBlocks',
  'freezeHeads',
  'adaptiveUp',
  'adaptiveDown',
  'adaptiveMinRate',
  'adaptiveMaxRate',
  'trendThreshold',
  'trendSpan',
  'selectiveThreshold',
  'selectiveBy',
  'gradualEvery',
  'autoWindow',
  'autoMinStability',
  'importanceEvery',
] as const;
export type StrategyConfig = Pick<LearnerConfig, (typeof STRATEGY_FIELDS)[number]>;

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
  entropyFloor: 0,
  dropVoid: false,
  rewardQuality: 1,
  rewardEfficiency: 0,
  rewardResource: 0,
  contextLength: 64,
  strategy: 'full',
  freezeEmbeddings: true,
  frozenBlocks: 1,
  freezeHeads: false,
  adaptiveUp: 1.1,
  adaptiveDown: 0.9,
  adaptiveMinRate: 3e-4,
  adaptiveMaxRate: 1e-2,
  trendThreshold: 0.01,
  trendSpan: 4,
  selectiveThreshold: 0.2,
  selectiveBy: 'seed',
  gradualEvery: 50,
  autoWindow: 20,
  autoMinStability: 0.9,
  importanceEvery: 10,
};

/** What one trainer is built with: the learner's step hyperparameters and its seed. */
export type TrainerConfig = Pick<
  LearnerConfig,
  'loss' | 'learningRate' | 'maxGradNorm' | 'valueCoef' | 'entropyCoef' | 'entropyFloor' | 'clipEps' | 'wCap'
> &
  StrategyConfig & {
    /** Seed of parameter initialisation and of synthetic batches. */
    seed: number;
    /** Episodes of the trainer check's synthetic batches (and the backend measurement's). */
    batchSize: number;
  };

/** The trainer's slice of a learner config. */
export function trainerConfigOf(learner: LearnerConfig, seed: number): TrainerConfig {
  const { loss, learningRate, maxGradNorm, valueCoef, entropyCoef, entropyFloor, clipEps, wCap } = learner;
  const strategy = Object.fromEntries(STRATEGY_FIELDS.map((k) => [k, learner[k]])) as StrategyConfig;
  return {
    loss,
    learningRate,
    maxGradNorm,
    valueCoef,
    entropyCoef,
    entropyFloor,
    clipEps,
    wCap,
    ...strategy,
    seed,
    batchSize: 8,
  };
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
