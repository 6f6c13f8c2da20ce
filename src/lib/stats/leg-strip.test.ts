import { describe, expect, it } from 'vitest';
import { ev, syncLeg } from './leg-strip.fakes';
import { legStrip, STRIP_EVENTS_KEPT } from './leg-strip';

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
