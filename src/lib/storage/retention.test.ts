import { describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_ARGS, type ModelArgs } from '../policy/config';
import { paramShapes } from '../policy/model';
import {
  keptCount,
  milestoneSpacing,
  modelParameterCount,
  retentionSchedule,
  survives,
  survivors,
  versionStorage,
} from './retention';

/** The run panel's defaults: the newest 5, milestones every 10 while young. */
const s = retentionSchedule(5, 10);

/** The survivors by testing every version (what `survivors` must equal). */
const bruteForce = (newest: number) =>
  Array.from({ length: newest + 1 }, (_, v) => v).filter((v) => survives(s, newest, v));

describe('the retention schedule', () => {
  it('after 10 versions keeps version 0, the newest 5 and the milestone 10', () => {
    expect(survivors(s, 10)).toEqual([0, 6, 7, 8, 9, 10]);
    expect(survivors(s, 9)).toEqual([0, 5, 6, 7, 8, 9]);
  });

  it('after 1 000 versions keeps the newest 5, every 10th of the newest 160, then sparser milestones', () => {
    const kept = survivors(s, 1000);
    expect(kept).toEqual(bruteForce(1000));
    expect(kept.slice(-5)).toEqual([996, 997, 998, 999, 1000]);
    // Ages under 160: every 10th version.
    expect(kept.filter((v) => v > 840 && v < 996)).toEqual([
      850, 860, 870, 880, 890, 900, 910, 920, 930, 940, 950, 960, 970, 980, 990,
    ]);
    // Ages 160–319: every 20th; 320–639: every 40th; 640 and more: every 80th.
    expect(kept.filter((v) => v > 680 && v <= 840)).toEqual([700, 720, 740, 760, 780, 800, 820, 840]);
    expect(kept.filter((v) => v > 360 && v <= 680)).toEqual([400, 440, 480, 520, 560, 600, 640, 680]);
    expect(kept.filter((v) => v <= 360)).toEqual([0, 80, 160, 240, 320]);
    expect(kept).toHaveLength(41);
  });

  it('after 100 000 versions keeps about 100, even on a log scale of age', () => {
    const kept = survivors(s, 100_000);
    expect(kept).toEqual(bruteForce(100_000));
    expect(kept.length).toBeLessThanOrEqual(5 + 1 + 8 * (2 + Math.log2(100_000 / 80)));
    expect(kept.length).toBeGreaterThan(80);
    // Each doubling of age past the youngest band holds about `perLevel` (8) versions.
    for (let lo = 160; lo < 51_200; lo *= 2) {
      const inBand = kept.filter((v) => 100_000 - v >= lo && 100_000 - v < 2 * lo).length;
      expect(inBand, `ages ${lo}–${2 * lo - 1}`).toBeGreaterThanOrEqual(7);
      expect(inBand, `ages ${lo}–${2 * lo - 1}`).toBeLessThanOrEqual(9);
    }
  });

  it('only ever deletes: a version gone at one publish never survives a later one', () => {
    let prev = new Set(survivors(s, 0));
    for (let n = 1; n <= 3000; n++) {
      const now = survivors(s, n);
      for (const v of now) if (v !== n) expect(prev.has(v), `version ${v} at ${n}`).toBe(true);
      prev = new Set(now);
    }
  });

  it('grows with the logarithm of the run: 10× the versions adds a bounded number of milestones', () => {
    const counts = [1_000, 10_000, 100_000, 1_000_000].map((n) => keptCount(s, n));
    for (let i = 1; i < counts.length; i++) {
      const added = (counts[i] ?? 0) - (counts[i - 1] ?? 0);
      expect(added).toBeGreaterThan(20);
      expect(added).toBeLessThanOrEqual(8 * Math.ceil(Math.log2(10)) + 1);
    }
  });

  it('spacing doubles with age past two bands, and a coarser schedule keeps fewer', () => {
    expect([0, 159, 160, 319, 320, 640].map((a) => milestoneSpacing(s, a))).toEqual([10, 10, 20, 20, 40, 80]);
    expect(keptCount(retentionSchedule(5, 100), 100_000)).toBeLessThan(keptCount(s, 100_000));
    expect(survivors(retentionSchedule(0, 10), 3)).toEqual([0, 3]);
  });
});

describe('what a run stores', () => {
  it('counts the parameters as the model lays them out', () => {
    const withPointer: ModelArgs = { ...DEFAULT_MODEL_ARGS, pointerDim: 16 };
    const withoutPointer: ModelArgs = { ...DEFAULT_MODEL_ARGS, pointerDim: 0, nLayers: 3 };
    const tied: ModelArgs = { ...DEFAULT_MODEL_ARGS, tieEmbeddings: true };
    for (const a of [DEFAULT_MODEL_ARGS, withPointer, withoutPointer, tied]) {
      const n = paramShapes(a).reduce((sum, [, shape]) => sum + shape.reduce((p, d) => p * d, 1), 0);
      expect(modelParameterCount(a)).toBe(n);
    }
    const { vocabSize: V, dModel: D } = DEFAULT_MODEL_ARGS;
    expect(modelParameterCount(tied)).toBe(modelParameterCount(DEFAULT_MODEL_ARGS) - V * D);
  });

  it('is the kept versions’ weights plus one Adam state', () => {
    const mb = 1e6;
    expect(versionStorage(s, mb, 11)).toEqual({ versions: 6, bytes: 8 * mb });
    const hour = versionStorage(s, 0.43 * mb, 17_000);
    expect(hour.versions).toBeLessThan(80);
    expect(hour.bytes).toBeLessThan(40 * mb);
  });
});
