import { shownNumber } from '../errors';
import type { LearnerConfig } from '../rl/learner-config';

/**
 * Training settings for the MLP policy of a custom environment, trained through the async
 * pipeline. Its update's hyperparameters are the learner's (`LearnerConfig`: learning rate, γ of
 * the returns-to-go, value and entropy weights, PPO epochs, clip ε, w cap, gradient clip).
 */
export interface CustomTrainConfig extends Pick<
  LearnerConfig,
  | 'learningRate'
  | 'gamma'
  | 'valueCoef'
  | 'entropyCoef'
  | 'updatesPerBatch'
  | 'clipEps'
  | 'wCap'
  | 'maxGradNorm'
> {
  /** Policy updates: training stops once this many versions after version 0 are published. */
  iterations: number;
  /** Episodes one rollout job plays (a group). */
  episodesPerGroup: number;
  /** Groups per update (the pipeline's batch B): an update trains on `episodesPerGroup × groupsPerBatch` episodes. */
  groupsPerBatch: number;
  /** Max staleness η in versions (DESIGN §5): 0 alternates rollout and training, ≥ 1 overlaps them. */
  eta: number;
  /** Rollout workers, each with its own copy of the environment in its own sandbox. */
  workers: number;
  /** Steps a rollout plays between checks for a newer version (interruptible rollouts). */
  yieldEvery: number;
  /** Hidden width of the MLP. */
  hidden: number;
  /** Seed of the initial weights and of action sampling. */
  seed: number;
  /** Stored versions kept: the newest `keepVersions`, plus version 0 and every `milestoneEvery`-th. */
  keepVersions: number;
  milestoneEvery: number;
}

/** Episodes of random actions that measure a custom environment's baseline return. */
export const CUSTOM_BASELINE_EPISODES = 20;
/** Episodes that measure the untrained (sampled) and the trained (greedy) MLP's return. */
export const CUSTOM_MEASURE_EPISODES = 10;

export const DEFAULT_CUSTOM_TRAIN: CustomTrainConfig = {
  iterations: 40,
  episodesPerGroup: 5,
  groupsPerBatch: 2,
  eta: 1,
  workers: 1,
  yieldEvery: 16,
  hidden: 32,
  learningRate: 0.01,
  gamma: 0.99,
  valueCoef: 0.5,
  entropyCoef: 0.01,
  updatesPerBatch: 1,
  clipEps: 0.2,
  wCap: 5,
  maxGradNorm: 0.5,
  seed: 1,
  keepVersions: 5,
  milestoneEvery: 10,
};

/** Checks the settings the panel lets a user change; throws a message that says what is wrong. */
export function validateCustomTrain(c: CustomTrainConfig): void {
  if (!Number.isInteger(c.iterations) || c.iterations < 1 || c.iterations > 500)
    throw new Error(`iterations must be a whole number from 1 to 500, got ${shownNumber(c.iterations)}`);
  if (!Number.isInteger(c.eta) || c.eta < 0 || c.eta > 8)
    throw new Error(`η must be a whole number from 0 to 8, got ${shownNumber(c.eta)}`);
  if (!Number.isInteger(c.workers) || c.workers < 1 || c.workers > 4)
    throw new Error(`rollout workers must be a whole number from 1 to 4, got ${shownNumber(c.workers)}`);
  if (!Number.isInteger(c.updatesPerBatch) || c.updatesPerBatch < 1)
    throw new Error(
      `updates per batch must be a whole number of at least 1, got ${shownNumber(c.updatesPerBatch)}`,
    );
}
