import { describe, expect, it } from 'vitest';
import { gae, grpoAdvantages, normalisedAdvantages, rlooAdvantages } from './advantages';

describe('advantage estimators', () => {
  it('GRPO normalises within each group', () => {
    // Group a: returns 1, 0 → mean 0.5, std 0.5 → +1, −1. Group b: 2, 2, 5 → mean 3, std √2.
    const a = grpoAdvantages([1, 2, 0, 2, 5, 7], ['a', 'b', 'a', 'b', 'b', 'c'], 0);
    expect(a[0]).toBeCloseTo(1, 10);
    expect(a[2]).toBeCloseTo(-1, 10);
    expect(a[1]).toBeCloseTo(-1 / Math.sqrt(2), 10);
    expect(a[3]).toBeCloseTo(-1 / Math.sqrt(2), 10);
    expect(a[4]).toBeCloseTo(2 / Math.sqrt(2), 10);
    expect(a[5]).toBe(0); // a group of one
  });

  it('GRPO gives 0 to a group whose returns are all equal (ε keeps it finite)', () => {
    expect(grpoAdvantages([1, 1, 1], ['g', 'g', 'g'])).toEqual([0, 0, 0]);
  });

  it('RLOO subtracts the mean of the others in the group', () => {
    // Group g: 1, 0, 0.5: A_0 = 1 − 0.25, A_1 = 0 − 0.75, A_2 = 0.5 − 0.5.
    const a = rlooAdvantages([1, 0, 0.5, 3], ['g', 'g', 'g', 'h']);
    expect(a[0]).toBeCloseTo(0.75, 10);
    expect(a[1]).toBeCloseTo(-0.75, 10);
    expect(a[2]).toBeCloseTo(0, 10);
    expect(a[3]).toBe(0);
  });

  it('GAE matches a hand computation', () => {
    // r = [0, 1], V = [0.5, 0.2], γ = 0.9, λ = 0.8:
    // δ1 = 1 + 0 − 0.2 = 0.8; A1 = 0.8
    // δ0 = 0 + 0.9·0.2 − 0.5 = −0.32; A0 = −0.32 + 0.72·0.8 = 0.256
    const { advantages, returns } = gae([0, 1], [0.5, 0.2], 0.9, 0.8);
    expect(advantages[1]).toBeCloseTo(0.8, 10);
    expect(advantages[0]).toBeCloseTo(0.256, 10);
    expect(returns[0]).toBeCloseTo(0.756, 10);
    expect(returns[1]).toBeCloseTo(1.0, 10);
  });

  it('GAE with λ = 1 and V = 0 is the discounted return', () => {
    const { advantages } = gae([1, 0, 2], [0, 0, 0], 0.5, 1);
    expect(advantages).toEqual([1 + 0 + 0.25 * 2, 0 + 0.5 * 2, 2]);
    expect(() => gae([1], [], 1, 1)).toThrow(/1 rewards but 0 values/);
  });

  it('the value baseline, normalised over the batch: G − V to mean 0 and std 1', () => {
    // G − V = [2, 0, 1]: mean 1, population std √(2/3).
    const a = normalisedAdvantages([3, 1, 1], [1, 1, 0]);
    const s = Math.sqrt(2 / 3);
    expect(Array.from(a)).toEqual([1 / s, -1 / s, 0].map(Math.fround));
    expect(Array.from(normalisedAdvantages([2, 2], [0, 0]))).toEqual([0, 0]); // ε keeps it finite
    expect(() => normalisedAdvantages([1], [])).toThrow(/1 returns but 0 values/);
  });
});
