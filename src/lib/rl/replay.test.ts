import { describe, expect, it } from 'vitest';
import { Rng } from '../random';
import { ReplayBuffer } from './replay';
import { DEFAULT_REPLAY } from './replay-config';

describe('ReplayBuffer, FIFO', () => {
  it('draws the oldest items once each, with weight 1', () => {
    const b = new ReplayBuffer<string>({ ...DEFAULT_REPLAY, mode: 'fifo' });
    ['a', 'b', 'c'].forEach((x, i) => b.add(i, x));
    expect(b.draw(2, new Rng(1))?.map((d) => [d.item, d.weight])).toEqual([
      ['a', 1],
      ['b', 1],
    ]);
    expect(b.draw(2, new Rng(1))).toBeNull();
    expect(b.items()).toEqual(['c']);
  });

  it('puts a lost batch back at the front, and drops stale items on request', () => {
    const b = new ReplayBuffer<number>({ ...DEFAULT_REPLAY, mode: 'fifo' });
    [1, 2, 3].forEach((x) => b.add(x, x));
    const drawn = b.draw(2, new Rng(1)) ?? [];
    b.unshift(drawn);
    expect(b.items()).toEqual([1, 2, 3]);
    expect(b.removeWhere((x) => x < 3)).toEqual([1, 2]);
    expect(b.items()).toEqual([3]);
  });

  it('pushes out the oldest when full', () => {
    const b = new ReplayBuffer<number>({ ...DEFAULT_REPLAY, capacity: 2 });
    b.add(1, 1);
    b.add(2, 2);
    expect(b.add(3, 3)).toEqual([1]);
    expect(b.items()).toEqual([2, 3]);
  });
});

describe('ReplayBuffer, prioritized', () => {
  const config = {
    ...DEFAULT_REPLAY,
    mode: 'prioritized' as const,
    alpha: 1,
    epsilon: 0,
    beta0: 0.5,
    betaDraws: 2,
  };

  it('P(i) ∝ p_i^α and the importance weights are (N·P(i))^−β over their max', () => {
    const b = new ReplayBuffer<string>(config);
    b.add(0, 'a', 1);
    b.add(1, 'b', 3);
    expect(b.probabilities()).toEqual([0.25, 0.75]);
    const drawn = b.draw(2, new Rng(3)) ?? [];
    const w = Object.fromEntries(drawn.map((d) => [d.item, d.weight]));
    // β = 0.5: (2·0.25)^−0.5 = √2, (2·0.75)^−0.5 = √(2/3); normalised by √2.
    expect(w.a).toBeCloseTo(1);
    expect(w.b).toBeCloseTo(Math.sqrt(2 / 3) / Math.sqrt(2));
    expect(b.size).toBe(2); // items stay for reuse
  });

  it('draws high-priority items more often, and anneals β to 1', () => {
    const b = new ReplayBuffer<string>({ ...config, betaDraws: 10 });
    b.add(0, 'rare', 1);
    b.add(1, 'often', 9);
    b.add(2, 'never', 0);
    const rng = new Rng(7);
    const counts: Record<string, number> = { rare: 0, often: 0, never: 0 };
    for (let i = 0; i < 400; i++)
      for (const d of b.draw(1, rng) ?? []) counts[d.item] = (counts[d.item] ?? 0) + 1;
    expect(counts.never).toBe(0);
    expect(counts.often ?? 0).toBeGreaterThan(5 * (counts.rare ?? 0));
    expect(b.beta).toBe(1);
  });

  it('new items get the largest priority seen, so they are drawn soon', () => {
    const b = new ReplayBuffer<string>(config);
    b.add(0, 'old', 5);
    b.setPriority(0, 0.1);
    b.add(1, 'new');
    const [pOld, pNew] = b.probabilities();
    expect(pNew ?? 0).toBeGreaterThan(pOld ?? 0);
  });
});
