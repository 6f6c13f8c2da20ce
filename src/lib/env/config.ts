import type { SandboxLimits } from '../sandbox/types';

/** Reward weights; each part is recorded per episode so the page can show it. */
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
  /**
   * Failing tests a `<run>` of a tool-use task reports (absent: `MAX_REPORTED_FAILURES`, 2); fewer
   * when the context has no room for them.
   */
  reportFailures?: number;
  /**
   * Tool-use tasks: the first turn may only end with `<run>` (the environment runs the first
   * program and appends its report); the policy then submits or revises. Off with one turn.
   */
  autoRun: boolean;
}

export const DEFAULT_ENV_CONFIG: EnvConfig = {
  maxTurns: 3,
  maxTokensPerTurn: 12,
  contextLength: 64,
  allowRunOnLastTurn: true,
  limits: { deadlineMs: 50 },
  reward: DEFAULT_REWARD,
  autoRun: false,
};

/**
 * Reward of tool-use tasks (DESIGN §3.1): a run earns nothing of itself (no `ranOk`: running
 * pays only through what the report tells), and a turn costs 0.02 against a right answer's 1.
 */
export const TOOLUSE_REWARD: RewardConfig = { ...DEFAULT_REWARD, ranOk: 0 };

/** The environment of tool-use tasks: four turns, so up to three runs before the submit. */
export const TOOLUSE_ENV_CONFIG: EnvConfig = { ...DEFAULT_ENV_CONFIG, maxTurns: 4, reward: TOOLUSE_REWARD };

/** Most failing tests a tool-use report may show (each takes about 9 of the context's tokens). */
export const MAX_REPORT_FAILURES = 4;

/** The largest weight a reward part may have: 100 times the default pass weight. */
export const MAX_REWARD_WEIGHT = 100;

/**
 * The longest sandbox deadline of one run, ms (the default is 50): a rollout runs a program at
 * every turn, and the sandbox's own warm-up run gets this long.
 */
export const MAX_DEADLINE_MS = 10_000;

/** The largest memory, stack and output limit of one sandbox run (1 GiB, 1 Gi characters). */
export const MAX_LIMIT_SIZE = 2 ** 30;

/** A value as a message shows it: a number as it is, anything else as JSON (`""`, `"x"`, `true`). */
const shown = (v: unknown): string => (typeof v === 'number' ? String(v) : (JSON.stringify(v) ?? String(v)));

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Throws with a readable message when `c` cannot configure an environment. */
export function validateEnvConfig(c: EnvConfig): void {
  const config: unknown = c;
  if (!isPlainObject(config)) throw new Error(`the env config must be an object, got ${shown(config)}`);
  for (const k of ['maxTurns', 'maxTokensPerTurn', 'contextLength'] as const) {
    const v: unknown = config[k];
    if (!Number.isInteger(v) || (v as number) < 1)
      throw new Error(`env ${k} must be a positive integer, got ${shown(v)}`);
  }
  if (c.maxTokensPerTurn < 2)
    throw new Error('env maxTokensPerTurn must be at least 2 (an operand and a control token)');
  if (c.maxTokensPerTurn > c.contextLength)
    throw new Error(
      `env maxTokensPerTurn must be at most the env contextLength (${c.contextLength}): a turn fits in the context, got ${c.maxTokensPerTurn}`,
    );
  // Every turn writes at least an operand and a control token.
  const maxTurns = Math.floor(c.contextLength / 2);
  if (c.maxTurns > maxTurns)
    throw new Error(
      `env maxTurns must be an integer from 1 to ${maxTurns} (a turn writes at least 2 of the ${c.contextLength} tokens of the context), got ${c.maxTurns}`,
    );
  if (typeof config.allowRunOnLastTurn !== 'boolean')
    throw new Error(`env allowRunOnLastTurn must be true or false, got ${shown(config.allowRunOnLastTurn)}`);
  if (typeof config.autoRun !== 'boolean')
    throw new Error(`env autoRun must be true or false, got ${shown(config.autoRun)}`);
  const limits: unknown = config.limits;
  if (!isPlainObject(limits)) throw new Error(`env limits must be an object, got ${shown(limits)}`);
  const deadline = limits.deadlineMs;
  if (
    deadline !== undefined &&
    !(typeof deadline === 'number' && deadline > 0 && deadline <= MAX_DEADLINE_MS)
  )
    throw new Error(
      `sandbox limit deadlineMs must be a number of ms above 0, at most ${MAX_DEADLINE_MS}, got ${shown(deadline)}`,
    );
  for (const k of ['memoryBytes', 'stackBytes', 'outputChars'] as const) {
    const v = limits[k];
    if (v !== undefined && !(Number.isInteger(v) && (v as number) >= 1 && (v as number) <= MAX_LIMIT_SIZE))
      throw new Error(`sandbox limit ${k} must be an integer from 1 to ${MAX_LIMIT_SIZE}, got ${shown(v)}`);
  }
  const failures: unknown = config.reportFailures;
  if (
    failures !== undefined &&
    !(
      typeof failures === 'number' &&
      Number.isInteger(failures) &&
      failures >= 0 &&
      failures <= MAX_REPORT_FAILURES
    )
  )
    throw new Error(
      `env reportFailures must be an integer from 0 to ${MAX_REPORT_FAILURES}, got ${shown(failures)}`,
    );
  const reward: unknown = config.reward;
  if (!isPlainObject(reward))
    throw new Error(`env reward must be an object of weights, got ${shown(reward)}`);
  for (const k of Object.keys(DEFAULT_REWARD) as (keyof RewardConfig)[]) {
    const v = reward[k];
    if (!(typeof v === 'number' && v >= 0 && v <= MAX_REWARD_WEIGHT))
      throw new Error(`reward weight ${k} must be a number from 0 to ${MAX_REWARD_WEIGHT}, got ${shown(v)}`);
  }
}
