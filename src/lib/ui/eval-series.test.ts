import { describe, expect, it } from 'vitest';
import { evalSeries, REVISE_LABEL } from './eval-series';
import type { EvalPoint } from './run-state.svelte';

const point = (
  iteration: number,
  level: EvalPoint['level'],
  train: number,
  held: number | null,
): EvalPoint => ({
  iteration,
  seconds: iteration,
  episodes: iteration * 16,
  level,
  suite: null,
  successTrain: train,
  successHeldOut: held,
  meanRewardTrain: 0,
});

describe('the greedy-success chart', () => {
  it('draws one training and one held-out line while every point is of one task set', () => {
    const lines = evalSeries([point(10, 'easy', 0.1, 0.2), point(20, 'easy', 0.3, null)]);
    expect(lines.map((l) => l.label)).toEqual(['training tasks', 'held-out tasks']);
    expect(lines[1]?.values).toEqual([0.2, NaN]);
  });

  it('starts new lines at a promotion instead of dropping the old ones', () => {
    const lines = evalSeries([
      point(10, 'easy', 0.3, 0.3),
      point(20, 'easy', 0.5, 0.4),
      point(30, 'medium', 0, 0),
    ]);
    expect(lines.map((l) => l.label)).toEqual([
      'training tasks (easy)',
      'held-out tasks (easy)',
      'training tasks (medium)',
      'held-out tasks (medium)',
    ]);
    expect(lines[0]?.values).toEqual([0.3, 0.5, NaN]);
    expect(lines[2]?.values).toEqual([NaN, NaN, 0]);
    expect(new Set(lines.map((l) => l.color)).size).toBe(4);
  });

  it("names a run's own suite", () => {
    const mine = { ...point(10, 'medium', 0.5, 0), suite: 'my tasks' };
    const lines = evalSeries([point(5, 'easy', 0, 0), mine]);
    expect(lines[2]?.label).toBe('training tasks ("my tasks")');
  });

  it('has its two lines, empty, before any evaluation', () => {
    expect(evalSeries([]).map((l) => [l.label, l.values.length])).toEqual([
      ['training tasks', 0],
      ['held-out tasks', 0],
    ]);
  });

  it('draws the generalisation line once a point has it (points stored before it have none)', () => {
    const general = { ...point(20, 'easy', 0.5, 0.4), successGeneralisation: 0.25 };
    const lines = evalSeries([point(10, 'easy', 0.1, 0.2), general]);
    expect(lines.map((l) => l.label)).toEqual(['training tasks', 'held-out tasks', 'generalisation tasks']);
    expect(lines[2]?.values).toEqual([NaN, 0.25]);
    expect(evalSeries([point(10, 'easy', 0.1, 0.2)])).toHaveLength(2);
    const promoted = evalSeries([general, { ...point(30, 'medium', 0, 0), successGeneralisation: null }]);
    expect(promoted.map((l) => l.label)).toContain('generalisation tasks (medium)');
  });

  it("draws a tool-use run's held-out revise rate as a dashed line of its own; a point where no run failed is a gap", () => {
    const tool = (iteration: number, reviseRate: number | null | undefined): EvalPoint => ({
      ...point(iteration, 'easy', 0.5, 0.4),
      toolUse: { successOneTurn: 0.1, solvedWithRun: 1, meanTurns: 2, runFraction: 0.5, reviseRate },
    });
    const lines = evalSeries([tool(10, 0.25), tool(20, null), tool(30, undefined), tool(40, 0)]);
    expect(lines.map((l) => l.label)).toEqual(['training tasks', 'held-out tasks', REVISE_LABEL]);
    expect(lines[2]?.values).toEqual([0.25, NaN, NaN, 0]);
    expect(lines[2]?.dash?.length).toBeGreaterThan(0);
    expect(lines[0]?.dash).toBeUndefined();
    expect(new Set(lines.map((l) => l.color)).size).toBe(3);
  });

  it('has no revise line for an examples run (not a flat zero)', () => {
    const lines = evalSeries([point(10, 'easy', 0.1, 0.2), point(20, 'easy', 0.3, 0.4)]);
    expect(lines.map((l) => l.label)).not.toContain(REVISE_LABEL);
    expect(lines.some((l) => l.dash)).toBe(false);
  });

  it('starts a new revise line at a promotion, as the success lines do', () => {
    const tool = (iteration: number, level: EvalPoint['level'], reviseRate: number): EvalPoint => ({
      ...point(iteration, level, 0.5, 0.4),
      toolUse: { successOneTurn: null, solvedWithRun: null, meanTurns: 3, reviseRate },
    });
    const lines = evalSeries([tool(10, 'easy', 0.5), tool(20, 'medium', 0.75)]);
    const revise = lines.filter((l) => l.label.startsWith(REVISE_LABEL));
    expect(revise.map((l) => l.label)).toEqual([`${REVISE_LABEL} (easy)`, `${REVISE_LABEL} (medium)`]);
    expect(revise.map((l) => l.values)).toEqual([
      [0.5, NaN],
      [NaN, 0.75],
    ]);
  });
});
