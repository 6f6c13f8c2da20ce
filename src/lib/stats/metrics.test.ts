import { describe, expect, it } from 'vitest';
import type { TimelineEvent } from '../pipeline/events';
import {
  adoptionLatencies,
  busyCoreMs,
  coreBoundSpeedup,
  coveredMs,
  overlapMs,
  percentile,
  policyLag,
  stepThroughput,
  turnSpread,
} from './metrics';

const ev = (
  lane: TimelineEvent['lane'],
  kind: TimelineEvent['kind'],
  t0: number,
  t1: number,
  version = 0,
): TimelineEvent => ({
  lane,
  kind,
  t0,
  t1,
  version,
});

describe('pipeline metrics', () => {
  it('percentile by nearest rank', () => {
    expect(percentile([5, 1, 3, 2, 4], 50)).toBe(3);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 95)).toBe(10);
    expect(percentile([], 50)).toBeNaN();
  });

  it('adoption latency is publish → the last lane to run that version or a newer one', () => {
    const events = [
      // Both lanes ran version 0 before; a third lane joins only later (start-up, not counted).
      ev('rollout-0', 'adopt', 50, 50, 0),
      ev('rollout-1', 'adopt', 60, 60, 0),
      ev('store', 'publish', 90, 100, 1),
      ev('rollout-0', 'adopt', 105, 105, 1),
      ev('rollout-1', 'adopt', 130, 130, 1),
      ev('store', 'publish', 190, 200, 2),
      ev('rollout-0', 'adopt', 210, 210, 2),
      // rollout-1 skipped version 2 and went straight to 3.
      ev('store', 'publish', 240, 250, 3),
      ev('rollout-1', 'adopt', 260, 260, 3),
      ev('rollout-0', 'adopt', 255, 255, 3),
    ];
    expect(adoptionLatencies(events, ['rollout-0', 'rollout-1'])).toEqual([30, 60, 10]);
    // A version one lane never reached is left out.
    expect(adoptionLatencies(events.slice(0, 7), ['rollout-0', 'rollout-1'])).toEqual([30]);
    expect(
      adoptionLatencies(
        [...events, ev('rollout-2', 'adopt', 400, 400, 3)],
        ['rollout-0', 'rollout-1', 'rollout-2'],
      ),
    ).toEqual([30, 60, 10]);
  });

  it('covered and overlapping time of span sets', () => {
    const events = [
      ev('rollout-0', 'episode', 0, 10),
      ev('rollout-1', 'episode', 5, 15),
      ev('trainer', 'train-step', 15, 20),
      ev('trainer', 'train-step', 30, 40),
      ev('rollout-0', 'episode', 35, 50),
    ];
    const rollout = (e: TimelineEvent) => e.lane.startsWith('rollout');
    const train = (e: TimelineEvent) => e.kind === 'train-step';
    expect(coveredMs(events, rollout)).toBe(30);
    expect(coveredMs(events, train)).toBe(15);
    expect(overlapMs(events, rollout, train)).toBe(5);
    expect(overlapMs(events.slice(0, 3), rollout, train)).toBe(0);
  });

  it('busy core-ms count each CPU sample for the part of the window it overlaps', () => {
    const samples = [
      { t0: 0, t1: 100, busyCores: 2 },
      { t0: 100, t1: 200, busyCores: 1 },
    ];
    expect(busyCoreMs(samples, 50, 150)).toBe(50 * 2 + 50 * 1);
    expect(busyCoreMs(samples, 200, 300)).toBe(0);
  });

  it('the core-bound speedup counts the CPU work both phases share when overlapped', () => {
    // Rollout 200 ms on 2 busy cores, training 100 ms on 1: 500 core-ms of work.
    const phase = { rollout: [0, 200], train: [200, 300] } as const;
    const samples = [
      { t0: 0, t1: 200, busyCores: 2 },
      { t0: 200, t1: 300, busyCores: 1 },
    ];
    // Ideal (R + T) / max(R, T) = 1.5; on 2 cores the overlap needs 250 ms: 300 / 250.
    expect(coreBoundSpeedup([phase], samples, 2)).toBeCloseTo(1.2, 9);
    // On 4 cores the work fits beside itself: the ideal again.
    expect(coreBoundSpeedup([phase], samples, 4)).toBeCloseTo(1.5, 9);
    // A rollout that leaves a core idle overlaps fully on 2 cores.
    const light = [
      { t0: 0, t1: 200, busyCores: 1 },
      { t0: 200, t1: 300, busyCores: 1 },
    ];
    expect(coreBoundSpeedup([phase], light, 2)).toBeCloseTo(1.5, 9);
    expect(coreBoundSpeedup([], samples, 2)).toBeNaN();
  });
});

describe('stepThroughput', () => {
  // Four steps of 16 episodes, 1 s apart; the trainer waited 600 ms and trained 400 ms in each.
  const steps = [0, 1, 2, 3].map((i) => ({ episodes: 16, waitMs: 600, trainMs: 400, at: 10_000 + i * 1000 }));

  it('times from the end of the first step to the step that reached the samples', () => {
    const t = stepThroughput(steps, 48); // reached at the third step
    expect(t.counted).toBe(2);
    expect(t.from).toBe(10_000);
    expect(t.trained).toBe(32);
    expect(t.seconds).toBe(2);
    expect(t.samplesPerSec).toBe(16);
    expect(t.busyMs).toBe(800);
    expect(t.trainerBusy).toBeCloseTo(0.4, 9);
    // (600 + 400) / max(600, 400) in every step after the first.
    expect(t.idealSpeedup).toBeCloseTo(1000 / 600, 9);
  });

  it('takes the ideal speedup over the counted steps only, not a step past the samples', () => {
    // A step published after the run reached its samples (the one in progress at Stop) counted
    // in the ideal speedup and not in the throughput it is compared with.
    const late = { episodes: 16, waitMs: 0, trainMs: 900, at: 14_000 };
    expect(stepThroughput([...steps, late], 48).idealSpeedup).toBeCloseTo(1000 / 600, 9);
  });

  it('counts every step when the samples were never reached, and nothing without steps', () => {
    expect(stepThroughput(steps, 1000).counted).toBe(3);
    expect(stepThroughput([], 10)).toMatchObject({ counted: 0, trained: 0, seconds: 0, samplesPerSec: 0 });
  });
});

describe('policyLag', () => {
  it('is 0 in samples and versions when every group is fresh (η = 0)', () => {
    const steps = [1, 2, 3].map((version) => ({ version, episodes: 16, staleness: [0, 0] }));
    expect(policyLag(steps)).toEqual({ meanVersions: 0, meanSamples: 0 });
  });

  it("counts the samples trained between a group's behaviour version and the step that trains it", () => {
    const steps = [
      { version: 1, episodes: 10, staleness: [0] },
      { version: 2, episodes: 20, staleness: [1] }, // written by v0: v1's 10 samples since
      { version: 3, episodes: 30, staleness: [2, 0] }, // by v0: 10 + 20; by v2: none
      { version: 4, episodes: 5, staleness: [1] }, // by v2: v3's 30
    ];
    const lag = policyLag(steps);
    expect(lag.meanVersions).toBeCloseTo((0 + 1 + 2 + 0 + 1) / 5, 12);
    expect(lag.meanSamples).toBeCloseTo((0 + 10 + 30 + 0 + 30) / 5, 12);
  });

  it('counts no samples for steps a history lacks, and is null with no trained group', () => {
    // A resumed run's history from v11: a group 3 stale at v12 was written by v8 (v9, v10 unknown).
    expect(
      policyLag([
        { version: 11, episodes: 8, staleness: [] },
        { version: 12, episodes: 8, staleness: [3] },
      ]),
    ).toEqual({ meanVersions: 3, meanSamples: 8 });
    expect(policyLag([])).toEqual({ meanVersions: null, meanSamples: null });
  });
});

describe('turnSpread', () => {
  it('counts the turns of every episode and the longest of each group', () => {
    // Two groups: one all single-turn, one with a four-turn episode.
    const s = turnSpread(
      [
        [1, 1, 1, 1],
        [1, 2, 4, 1],
      ],
      4,
    );
    expect(s.episodes).toBe(8);
    expect(s.mean).toBeCloseTo(12 / 8);
    expect(s.p50).toBe(1);
    expect(s.p95).toBe(4);
    expect(s.max).toBe(4);
    expect(s.shares).toEqual([6 / 8, 1 / 8, 0, 1 / 8]);
    expect(s.meanGroupMax).toBeCloseTo((1 + 4) / 2);
  });

  it('is NaN with no episodes, with a zero share of every count', () => {
    const s = turnSpread([[]], 3);
    expect(s.episodes).toBe(0);
    expect(s.mean).toBeNaN();
    expect(s.p95).toBeNaN();
    expect(s.max).toBeNaN();
    expect(s.meanGroupMax).toBeNaN();
    expect(s.shares).toEqual([0, 0, 0]);
  });
});
