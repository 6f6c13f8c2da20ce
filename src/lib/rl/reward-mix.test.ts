import { describe, expect, it } from 'vitest';
import { mixedReturn, mixes, ownedTokens } from './reward-mix';

const seed = { rewardQuality: 0.6, rewardEfficiency: 0.3, rewardResource: 0.1 };

describe('the reward mix', () => {
  it('is 0.6 quality + 0.3 efficiency + 0.1 resource with the seed’s weights', () => {
    // efficiency 1 − 16/64 = 0.75, resource 1 − 2/8 = 0.75
    const r = mixedReturn({ quality: 1.5, tokens: 16, sandboxMs: 2 }, seed, 64, 8);
    expect(r).toBeCloseTo(0.6 * 1.5 + 0.3 * 0.75 + 0.1 * 0.75, 12);
  });

  it('floors each share at 0, and counts no resource term without a budget', () => {
    expect(mixedReturn({ quality: 0, tokens: 100, sandboxMs: 50 }, seed, 64, 8)).toBe(0);
    expect(mixedReturn({ quality: 0, tokens: 64, sandboxMs: 50 }, seed, 64, 0)).toBeCloseTo(0.1, 12);
  });

  it('changes nothing at its default, and counts the policy’s tokens alone', () => {
    const plain = { rewardQuality: 1, rewardEfficiency: 0, rewardResource: 0 };
    expect(mixes(plain)).toBe(false);
    expect(mixes(seed)).toBe(true);
    expect(mixedReturn({ quality: -0.4, tokens: 30, sandboxMs: 9 }, plain, 64, 8)).toBeCloseTo(-0.4, 12);
    expect(ownedTokens({ owned: [0, 0, 1, 1, 0, 1] })).toBe(3);
  });
});
