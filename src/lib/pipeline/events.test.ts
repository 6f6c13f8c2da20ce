import { describe, expect, it } from 'vitest';
import { EventLog, now, type TimelineEvent } from './events';

const ev = (t0: number): TimelineEvent => ({
  lane: 'trainer',
  kind: 'train-step',
  t0,
  t1: t0 + 1,
  version: 0,
});

describe('EventLog', () => {
  it('keeps only the newest events past capacity', () => {
    const log = new EventLog(3);
    log.push(ev(1), ev(2), ev(3), ev(4));
    expect(log.events.map((e) => e.t0)).toEqual([2, 3, 4]);
  });

  it('uses an epoch clock', () => {
    expect(Math.abs(now() - Date.now())).toBeLessThan(1000);
  });
});
