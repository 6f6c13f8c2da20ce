import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TimelineEvent } from './events';
import { EventBatcher, isVersionAnnounce } from './params-channel';

afterEach(() => vi.useRealTimers());

describe('isVersionAnnounce', () => {
  it('takes a version announce and refuses one without a checkpoint', () => {
    const ok = { runId: 'r', version: 3, publishedAt: 1, checkpoint: {} };
    expect(isVersionAnnounce(ok)).toBe(true);
    // typeof null is 'object': a null checkpoint passed and failed later with a TypeError.
    expect(isVersionAnnounce({ ...ok, checkpoint: null })).toBe(false);
    expect(isVersionAnnounce({ ...ok, version: '3' })).toBe(false);
    expect(isVersionAnnounce(null)).toBe(false);
  });
});

describe('EventBatcher', () => {
  const event = (i: number): TimelineEvent => ({
    lane: 'rollout-0',
    kind: 'episode',
    t0: i,
    t1: i,
    version: 0,
  });

  it('hands events over in one batch per interval', () => {
    vi.useFakeTimers();
    const b = new EventBatcher(100);
    const got: TimelineEvent[][] = [];
    b.sink = (events) => got.push(events);
    for (let i = 0; i < 3; i++) b.push(event(i));
    expect(got).toEqual([]);
    vi.advanceTimersByTime(100);
    expect(got.map((g) => g.map((e) => e.t0))).toEqual([[0, 1, 2]]);
  });

  it('without a sink keeps only the newest events, not all of them', () => {
    vi.useFakeTimers();
    const b = new EventBatcher(100);
    for (let i = 0; i < 12_000; i++) b.push(event(i));
    vi.advanceTimersByTime(1000);
    const got: TimelineEvent[][] = [];
    b.sink = (events) => got.push(events);
    b.flush();
    expect(got).toHaveLength(1);
    expect(got[0]?.length).toBe(5000);
    expect(got[0]?.[0]?.t0).toBe(7000);
    expect(got[0]?.at(-1)?.t0).toBe(11_999);
  });
});
