import { describe, expect, it } from 'vitest';
import {
  compareJobs,
  ExpectedRewards,
  jobOrder,
  learningValue,
  CostEstimates,
  preemptionVictim,
  rewardVictim,
  WaitingQueue,
  type Schedulable,
} from './scheduler';

const job = (id: number, cls: Schedulable['cls'], value: number, enqueuedAt = 0): Schedulable => ({
  id,
  cls,
  value,
  enqueuedAt,
});

describe('learningValue', () => {
  it('is p(1 − p) of the smoothed success rate: largest near 0.5, small when always solved or never', () => {
    expect(learningValue(0, 0)).toBeCloseTo(0.25);
    expect(learningValue(5, 10)).toBeCloseTo(0.25);
    expect(learningValue(10, 10)).toBeCloseTo((11 / 12) * (1 / 12));
    expect(learningValue(0, 10)).toBeCloseTo((1 / 12) * (11 / 12));
    expect(learningValue(5, 10)).toBeGreaterThan(learningValue(9, 10));
  });
});

describe('WaitingQueue', () => {
  it('orders by class, then value, then waiting longest', () => {
    const q = new WaitingQueue<Schedulable>();
    q.push(job(1, 'normal', 0.1, 0));
    q.push(job(2, 'low', 0.25, 0));
    q.push(job(3, 'normal', 0.2, 5));
    q.push(job(4, 'high', 0, 9));
    q.push(job(5, 'normal', 0.2, 1));
    expect([q.shift(), q.shift(), q.shift(), q.shift(), q.shift()].map((j) => j?.id)).toEqual([
      4, 5, 3, 1, 2,
    ]);
    expect(q.size).toBe(0);
    expect(compareJobs(job(1, 'high', 0), job(2, 'low', 1))).toBeLessThan(0);
  });
});

describe('preemptionVictim', () => {
  const running = [
    { id: 10, cls: 'normal' as const, value: 0.2, startedAt: 0 },
    { id: 11, cls: 'normal' as const, value: 0.05, startedAt: 1 },
    { id: 12, cls: 'low' as const, value: 0.25, startedAt: 2 },
    { id: 13, cls: 'high' as const, value: 0, startedAt: 3 },
  ];

  it('picks the lowest class, then the lowest value, once the waiting job has waited past the bound', () => {
    expect(preemptionVictim(job(1, 'high', 0, 0), running, 500, 200)?.id).toBe(12);
    expect(preemptionVictim(job(1, 'normal', 0, 0), running, 500, 200)?.id).toBe(12);
    expect(preemptionVictim(job(1, 'high', 0, 0), running.slice(0, 2), 500, 200)?.id).toBe(11);
  });

  it('does nothing before the bound, for an equal class, or with nothing waiting', () => {
    expect(preemptionVictim(job(1, 'high', 0, 400), running, 500, 200)).toBeNull();
    expect(preemptionVictim(job(1, 'low', 1, 0), running, 500, 200)).toBeNull();
    expect(preemptionVictim(undefined, running, 500, 200)).toBeNull();
  });
});

describe('rewardVictim', () => {
  const running = [
    { id: 10, cls: 'normal' as const, value: 0, expectedReward: 0.4, startedAt: 0 },
    { id: 11, cls: 'normal' as const, value: 0, expectedReward: 0.1, startedAt: 1 },
    { id: 12, cls: 'normal' as const, value: 0, expectedReward: 0.1, startedAt: 2 },
  ];
  const waiting = (expectedReward: number, enqueuedAt = 0) => ({
    ...job(1, 'normal', 0, enqueuedAt),
    expectedReward,
  });

  it('picks the lowest expected reward (the latest started among equals) when the margin is met', () => {
    expect(rewardVictim(waiting(0.7), running, 500, 200, 0.5)?.id).toBe(12);
    // Only job 11 and 12 are 0.5 below 0.6; job 10 is not.
    expect(rewardVictim(waiting(0.6), running.slice(0, 2), 500, 200, 0.5)?.id).toBe(11);
  });

  it('does nothing below the margin, before the bound, with an infinite margin or nothing waiting', () => {
    expect(rewardVictim(waiting(0.5), running, 500, 200, 0.5)).toBeNull();
    expect(rewardVictim(waiting(1, 400), running, 500, 200, 0.5)).toBeNull();
    expect(rewardVictim(waiting(9), running, 500, 200, Infinity)).toBeNull();
    expect(rewardVictim(undefined, running, 500, 200, 0.5)).toBeNull();
  });
});

describe('CostEstimates', () => {
  it('expects nothing of a task never played, then a running mean weighing recent groups more', () => {
    const c = new CostEstimates(2);
    expect(c.of('t')).toEqual({ sandboxMs: 0, tokens: 0 });
    c.record('t', { sandboxMs: 4, tokens: 10 });
    expect(c.of('t')).toEqual({ sandboxMs: 4, tokens: 10 });
    c.record('t', { sandboxMs: 1, tokens: 4 });
    // window 2: the earlier group weighs half: (4·0.5 + 1) / 1.5, (10·0.5 + 4) / 1.5.
    expect(c.of('t').sandboxMs).toBeCloseTo(2, 10);
    expect(c.of('t').tokens).toBeCloseTo(6, 10);
    expect(c.of('u')).toEqual({ sandboxMs: 0, tokens: 0 });
  });
});

describe('schedules', () => {
  // id, class, learning value, expected reward, enqueued at
  const jobs: Schedulable[] = [
    { id: 1, cls: 'normal', value: 0.1, expectedReward: 0.9, enqueuedAt: 0 },
    { id: 2, cls: 'low', value: 0.25, expectedReward: 1.2, enqueuedAt: 1 },
    { id: 3, cls: 'normal', value: 0.25, expectedReward: 0.2, enqueuedAt: 2 },
    { id: 4, cls: 'high', value: 0, expectedReward: 0, enqueuedAt: 3 },
    { id: 5, cls: 'normal', value: 0.2, enqueuedAt: 4 }, // no expected reward: 0
  ];
  const order = (kind: Parameters<typeof jobOrder>[0]) => {
    const q = new WaitingQueue<Schedulable>(jobOrder(kind));
    for (const j of [...jobs].reverse()) q.push(j);
    return Array.from({ length: q.size }, () => q.shift()?.id);
  };

  it('learning-value (the default): class, then learning value', () => {
    expect(order('learning-value')).toEqual([4, 3, 5, 1, 2]);
    const q = new WaitingQueue<Schedulable>();
    for (const j of jobs) q.push(j);
    expect(q.peek()?.id).toBe(4);
  });

  it('fifo: arrival order, whatever the class or value', () => {
    expect(order('fifo')).toEqual([1, 2, 3, 4, 5]);
  });

  it('expected-reward: class, then expected reward (absent as 0), then arrival', () => {
    expect(order('expected-reward')).toEqual([4, 1, 3, 5, 2]);
  });
});

describe('ExpectedRewards', () => {
  it('expects the prior of a task never played, then a running mean weighing recent returns more', () => {
    const r = new ExpectedRewards(1.25, 4);
    expect(r.of('a')).toBe(1.25);
    r.record('a', 0);
    expect(r.of('a')).toBe(0);
    r.record('a', 1);
    // Weights 0.75 and 1: (0·0.75 + 1) / 1.75.
    expect(r.of('a')).toBeCloseTo(1 / 1.75);
    expect(r.of('b')).toBe(1.25);
    const flat = new ExpectedRewards(0, 1); // window 1: only the newest return counts
    flat.record('a', 3);
    flat.record('a', 5);
    expect(flat.of('a')).toBe(5);
    expect(() => new ExpectedRewards(0, 0.5)).toThrow(/window/);
  });
});
