import { describe, expect, it } from 'vitest';
import {
  DEFAULT_ENV_CONFIG,
  MAX_DEADLINE_MS,
  MAX_REWARD_WEIGHT,
  validateEnvConfig,
  type EnvConfig,
} from './config';

describe('env config validation', () => {
  const check = (patch: Record<string, unknown>) => () =>
    validateEnvConfig({ ...DEFAULT_ENV_CONFIG, ...patch } as EnvConfig);

  it('accepts the default and the smaller configs the tests train with', () => {
    expect(check({})).not.toThrow();
    expect(check({ contextLength: 40, maxTurns: 2, maxTokensPerTurn: 5 })).not.toThrow();
    expect(
      check({ contextLength: 32, maxTurns: 1, maxTokensPerTurn: 6, allowRunOnLastTurn: false }),
    ).not.toThrow();
    expect(check({ limits: {} })).not.toThrow(); // every limit at the sandbox's default
    expect(
      check({ limits: { deadlineMs: MAX_DEADLINE_MS, memoryBytes: 2 ** 24, stackBytes: 2 ** 17 } }),
    ).not.toThrow();
    const weights = { pass: MAX_REWARD_WEIGHT, ranOk: 0, closeness: 0, turnCost: 0, noSubmit: 0 };
    expect(check({ reward: weights })).not.toThrow();
  });

  it('refuses turns and tokens an episode cannot have, naming the field and the value', () => {
    expect(check({ maxTurns: -5 })).toThrow(/env maxTurns must be a positive integer, got -5/);
    expect(check({ maxTurns: '3' })).toThrow(/env maxTurns must be a positive integer, got "3"/);
    expect(check({ maxTurns: 33 })).toThrow(/env maxTurns must be an integer from 1 to 32 .*, got 33/);
    expect(check({ maxTokensPerTurn: 1 })).toThrow(/at least 2/);
    expect(check({ maxTokensPerTurn: 65 })).toThrow(
      /env maxTokensPerTurn must be at most the env contextLength \(64\)/,
    );
    expect(check({ contextLength: 0 })).toThrow(/env contextLength must be a positive integer, got 0/);
    expect(check({ contextLength: Infinity })).toThrow(/env contextLength .* got Infinity/);
    expect(check({ allowRunOnLastTurn: 'no' })).toThrow(
      /env allowRunOnLastTurn must be true or false, got "no"/,
    );
  });

  it('refuses sandbox limits and reward weights out of range', () => {
    expect(check({ limits: { deadlineMs: -1 } })).toThrow(/sandbox limit deadlineMs .* got -1/);
    expect(check({ limits: { deadlineMs: 1e9 } })).toThrow(/at most 10000, got 1000000000/);
    expect(check({ limits: { deadlineMs: null } })).toThrow(/deadlineMs .* got null/);
    expect(check({ limits: { outputChars: 1.5 } })).toThrow(
      /sandbox limit outputChars must be an integer from 1 to/,
    );
    expect(check({ limits: 50 })).toThrow(/env limits must be an object, got 50/);
    const reward = (k: string, v: unknown) => check({ reward: { ...DEFAULT_ENV_CONFIG.reward, [k]: v } });
    expect(reward('pass', 'x')).toThrow(/reward weight pass must be a number from 0 to 100, got "x"/);
    expect(reward('turnCost', -100)).toThrow(/reward weight turnCost .* got -100/);
    expect(reward('closeness', NaN)).toThrow(/reward weight closeness .* got NaN/);
    expect(reward('ranOk', 1e9)).toThrow(/reward weight ranOk .* got 1000000000/);
    expect(check({ reward: null })).toThrow(/env reward must be an object of weights, got null/);
    const { noSubmit: _dropped, ...lacking } = DEFAULT_ENV_CONFIG.reward;
    expect(check({ reward: lacking })).toThrow(/reward weight noSubmit .* got undefined/);
  });
});
