import { describe, expect, it } from 'vitest';
import { emptyCounters } from './controller-types';
import { METRICS } from './controller.fakes';
import { countTrained, stepReport, successOf } from './step-report';
import type { EpisodeOutcome, PlayedGroup } from './types';

const group = (oldest: number, outcomes: EpisodeOutcome[]): PlayedGroup<EpisodeOutcome> => ({
  jobId: oldest,
  status: 'done',
  trajectories: outcomes,
  relabelled: [],
  seqs: [],
  oldestVersion: oldest,
  newestVersion: oldest,
  interrupted: 0,
  startedAt: 0,
  endedAt: 0,
});

describe('step report', () => {
  it('counts a step, its episodes and the staleness of each group', () => {
    const counters = emptyCounters();
    const groups = [group(3, [{ return: 1, solved: true }]), group(1, [{ return: 0, solved: false }])];
    expect(countTrained(counters, groups, 3)).toEqual([0, 2]);
    countTrained(counters, [groups[0] ?? group(3, [])], 4);
    expect(counters.trainSteps).toBe(2);
    expect(counters.trainedEpisodes).toBe(3);
    expect(counters.stalenessHistogram).toEqual({ 0: 1, 1: 1, 2: 1 });
  });

  it('reports mean return and success over every episode of the step', () => {
    const groups = [
      group(0, [
        { return: 1, solved: true },
        { return: 0.5, solved: false },
      ]),
      group(0, [{ return: 0, solved: false }]),
    ];
    const full = { ...METRICS, loss: 0.5, ms: 12 };
    const r = stepReport(7, groups, [0, 0], full, { waitMs: 3, trainMs: 12, at: 100 });
    expect(r).toMatchObject({
      version: 7,
      episodes: 3,
      meanReturn: 0.5,
      loss: 0.5,
      waitMs: 3,
      trainMs: 12,
      at: 100,
    });
    expect(r.success).toBeCloseTo(1 / 3);
    // The first group's returns 1 and 0.5 spread 0.25; the one-episode group has no spread.
    expect(r.returnSpread).toBeCloseTo(0.25);
    expect(stepReport(8, [], [], full, { waitMs: 0, trainMs: 0, at: 0 })).toMatchObject({
      meanReturn: 0,
      success: 0,
    });
    expect(successOf(groups)).toBeCloseTo(1 / 3);
    expect(successOf([])).toBe(0);
  });

  it('carries what the update strategy did, when the trainer said', () => {
    const full = { ...METRICS, loss: 0.5, ms: 12 };
    const strategy = {
      version: 6,
      strategy: 'frozen' as const,
      rate: 3e-3,
      tensorsTrained: 17,
      tensors: 31,
      performance: { current: 0.5, trend: 0, average: 0.5, stability: 1, count: 1 },
      importance: { seed: { 'head.w': 1 }, gradient: {} },
    };
    const times = { waitMs: 0, trainMs: 0, at: 0 };
    expect(stepReport(7, [], [], full, times, strategy).strategy).toEqual(strategy);
    expect('strategy' in stepReport(7, [], [], full, times)).toBe(false);
  });

  it('reports a spread of 0 where every episode of each task got the same return (the echo trap)', () => {
    const same = (r: number) =>
      group(0, [
        { return: r, solved: r > 0 },
        { return: r, solved: r > 0 },
      ]);
    const r = stepReport(3, [same(1), same(0)], [0, 0], METRICS, { waitMs: 0, trainMs: 0, at: 0 });
    expect(r.returnSpread).toBe(0);
    expect(r.meanReturn).toBe(0.5);
  });

  it('reports the mean episode length in turns and policy tokens of token trajectories only', () => {
    // Two token episodes: 1 turn of 3 policy tokens, 3 turns of 5 (the 0s are observation tokens).
    const ep = (turns: number, owned: number[]) => ({ return: 0, solved: false, turns, owned });
    const groups = [group(0, [ep(1, [0, 0, 1, 1, 1]), ep(3, [0, 1, 1, 0, 1, 1, 1])])];
    const r = stepReport(2, groups, [0], METRICS, { waitMs: 0, trainMs: 0, at: 0 });
    expect(r.meanTurns).toBe(2);
    expect(r.meanTokens).toBe(4);
    // A custom environment's episodes carry neither: the report leaves both out.
    const custom = stepReport(2, [group(0, [{ return: 1, solved: true }])], [0], METRICS, {
      waitMs: 0,
      trainMs: 0,
      at: 0,
    });
    expect('meanTurns' in custom || 'meanTokens' in custom).toBe(false);
  });
});
