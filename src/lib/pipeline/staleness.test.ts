import { describe, expect, it } from 'vitest';
import { admissionCapacity, isStale, oldestVersion, slotsHeldByEta, staleness } from './staleness';

describe('admissionCapacity (DESIGN §5)', () => {
  const limits = { maxConcurrent: 8, eta: 2, batch: 4 };

  it('is min(maxConcurrent − running, (η + v + 1)·B − (accepted + running))', () => {
    // (2 + 0 + 1)·4 − (0 + 0) = 12, slots 8 → 8.
    expect(admissionCapacity({ version: 0, accepted: 0, running: 0 }, limits)).toBe(8);
    // (2 + 1 + 1)·4 − (10 + 3) = 3, slots 5 → 3.
    expect(admissionCapacity({ version: 1, accepted: 10, running: 3 }, limits)).toBe(3);
    // Ahead of the bound: never negative.
    expect(admissionCapacity({ version: 0, accepted: 12, running: 2 }, limits)).toBe(0);
  });

  it('with η = 0 admits exactly one batch per version', () => {
    const sync = { maxConcurrent: 100, eta: 0, batch: 4 };
    expect(admissionCapacity({ version: 0, accepted: 0, running: 0 }, sync)).toBe(4);
    expect(admissionCapacity({ version: 0, accepted: 3, running: 1 }, sync)).toBe(0);
    expect(admissionCapacity({ version: 1, accepted: 4, running: 0 }, sync)).toBe(4);
  });

  it('unbounded η is limited by slots only', () => {
    expect(
      admissionCapacity(
        { version: 0, accepted: 1000, running: 2 },
        { maxConcurrent: 6, eta: Infinity, batch: 4 },
      ),
    ).toBe(4);
  });
});

describe('slotsHeldByEta', () => {
  const limits = { maxConcurrent: 8, eta: 2, batch: 4 };
  it('counts the free slots the bound leaves idle', () => {
    // 5 free slots, the bound admits 3: 2 held.
    expect(slotsHeldByEta({ version: 1, accepted: 10, running: 3 }, limits)).toBe(2);
    // Ahead of the bound: every free slot held.
    expect(slotsHeldByEta({ version: 0, accepted: 12, running: 2 }, limits)).toBe(6);
    // The bound admits more than there are slots: none held, and none with η unbounded.
    expect(slotsHeldByEta({ version: 0, accepted: 0, running: 0 }, limits)).toBe(0);
    expect(slotsHeldByEta({ version: 0, accepted: 1000, running: 2 }, { ...limits, eta: Infinity })).toBe(0);
  });
});

describe('staleness', () => {
  it('drops a sample whose oldest token is more than η versions old', () => {
    expect(staleness(5, 3)).toBe(2);
    expect(isStale(5, 3, 2)).toBe(false);
    expect(isStale(5, 2, 2)).toBe(true);
    expect(isStale(5, 0, Infinity)).toBe(false);
    expect(isStale(0, 0, 0)).toBe(false);
  });

  it('the oldest version ignores observation tokens (−1)', () => {
    expect(oldestVersion([-1, -1, 4, 3, -1, 5])).toBe(3);
    expect(oldestVersion([-1])).toBe(-1);
  });
});
