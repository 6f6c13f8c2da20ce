import { describe, expect, it } from 'vitest';
import { evalSeries } from './eval-series';
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
});
