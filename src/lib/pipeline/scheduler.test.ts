import { describe, expect, it } from 'vitest';
import { compareJobs, learningValue, preemptionVictim, WaitingQueue, type Schedulable } from './scheduler';

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
