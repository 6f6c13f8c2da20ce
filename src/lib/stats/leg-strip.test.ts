import { describe, expect, it } from 'vitest';
import type { EventKind, Lane, TimelineEvent } from '../pipeline/events';
import { legStrip, STRIP_EVENTS_KEPT } from './leg-strip';

const ev = (lane: Lane, kind: EventKind, t0: number, t1: number, version = 0): TimelineEvent => ({
  lane,
  kind,
  t0,
  t1,
  version,
});

/** A synchronous leg from `at`: the rollout plays, then the trainer trains, twice (6 s). */
const syncLeg = (at: number): TimelineEvent[] => [
  ev('controller', 'init', at - 500, at),
  ev('rollout-0', 'generate', at, at + 2000),
  ev('trainer', 'train-step', at + 2000, at + 3000),
  ev('store', 'publish', at + 3000, at + 3000),
  ev('rollout-0', 'generate', at + 3000, at + 5000),
  ev('trainer', 'train-step', at + 5000, at + 6000),
];

describe('legStrip', () => {
  it('keeps the trainer and rollout lanes of a leg, from its first to its last event', () => {
    const strip = legStrip(syncLeg(10_000));
    expect(strip?.origin).toBe(10_000);
    expect(strip?.end).toBe(16_000);
    expect(strip?.events.map((e) => e.lane)).toEqual(['rollout-0', 'trainer', 'rollout-0', 'trainer']);
    expect(legStrip([ev('store', 'publish', 1, 1)])).toBeNull();
  });

  it('keeps at most the newest events of a long leg', () => {
    const many = Array.from({ length: STRIP_EVENTS_KEPT + 5 }, (_, i) =>
      ev('trainer', 'train-step', i, i + 1),
    );
    const strip = legStrip(many);
    expect(strip?.events).toHaveLength(STRIP_EVENTS_KEPT);
    expect(strip?.origin).toBe(5);
  });
});
