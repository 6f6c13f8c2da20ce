import type { SandboxLimits } from '../sandbox/types';

/** Reward weights (issue 4); each part is recorded per episode so the page can show it. */
export interface RewardConfig {
  /** Weight of the final reward: the fraction of hidden tests the submitted program passes. */
  pass: number;
  /** Paid once per turn whose program ran without error (run or submit). */
  ranOk: number;
  /** Weight of the closeness of the submitted program's outputs, mean of 1/(1+|y−ŷ|) over hidden tests. */
  closeness: number;
  /** Cost of each turn (subtracted). */
  turnCost: number;
  /** Penalty when the episode ends without a submit: out of turns or context (subtracted). */
  noSubmit: number;
}

export const DEFAULT_REWARD: RewardConfig = {
  pass: 1,
  ranOk: 0.05,
  closeness: 0.2,
  turnCost: 0.02,
  noSubmit: 0.2,
};

/** Limits and reward of the code-writing environment (DESIGN §3). */
export interface EnvConfig {
  /** Turns per episode; each ends with `<run>` or `<submit>`. */
  maxTurns: number;
  /** Tokens the policy may write in one turn, the control token included. */
  maxTokensPerTurn: number;
  /** Longest token sequence of an episode (observation + feedback + program tokens): the policy's context. */
  contextLength: number;
  /** May the last turn end with `<run>` (and so end the episode without a submit)? */
  allowRunOnLastTurn: boolean;
  /** Sandbox limits of each run. */
  limits: Partial<SandboxLimits>;
  reward: RewardConfig;
}

export const DEFAULT_ENV_CONFIG: EnvConfig = {
  maxTurns: 3,
  maxTokensPerTurn: 12,
  contextLength: 64,
  allowRunOnLastTurn: true,
  limits: { deadlineMs: 50 },
  reward: DEFAULT_REWARD,
};

/** Throws with a readable message when `c` cannot configure an environment. */
export function validateEnvConfig(c: EnvConfig): void {
  for (const k of ['maxTurns', 'maxTokensPerTurn', 'contextLength'] as const) {
    if (!Number.isInteger(c[k]) || c[k] < 1)
      throw new Error(`env ${k} must be a positive integer, got ${c[k]}`);
  }
  if (c.maxTokensPerTurn < 2)
    throw new Error('env maxTokensPerTurn must be at least 2 (an operand and a control token)');
  for (const [k, v] of Object.entries(c.reward)) {
    if (!Number.isFinite(v) || v < 0)
      throw new Error(`reward weight ${k} must be a finite number ≥ 0, got ${v}`);
  }
}
