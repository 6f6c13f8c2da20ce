import type { EvalPoint } from './run-state.svelte';

/** One line of the chart (the shape `Chart.svelte` draws): a value per point, NaN for a gap. */
export interface EvalLine {
  label: string;
  values: number[];
  color: string;
}

const TRAIN_COLORS = ['#4ade80', '#22d3ee', '#a78bfa'];
const HELD_COLORS = ['#fbbf24', '#fb923c', '#f43f5e'];

/** The task set a point was evaluated on: the run's own suite, or the level's built-in tasks. */
const setOf = (e: EvalPoint): string => (e.suite ? `"${e.suite}"` : e.level);

/**
 * The greedy-success chart's lines: training and held-out success per task set evaluated (the
 * curriculum moves the evaluation to the level it trains, so that a promotion starts new lines
 * rather than a drop in the old ones); named by the set once there is more than one.
 */
export function evalSeries(points: readonly EvalPoint[]): EvalLine[] {
  const sets = [...new Set(points.map(setOf))];
  if (sets.length <= 1) {
    return [
      { label: 'training tasks', values: points.map((e) => e.successTrain), color: TRAIN_COLORS[0] ?? '' },
      {
        label: 'held-out tasks',
        values: points.map((e) => e.successHeldOut ?? NaN),
        color: HELD_COLORS[0] ?? '',
      },
    ];
  }
  return sets.flatMap((set, i) => [
    {
      label: `training tasks (${set})`,
      values: points.map((e) => (setOf(e) === set ? e.successTrain : NaN)),
      color: TRAIN_COLORS[i % TRAIN_COLORS.length] ?? '',
    },
    {
      label: `held-out tasks (${set})`,
      values: points.map((e) => (setOf(e) === set ? (e.successHeldOut ?? NaN) : NaN)),
      color: HELD_COLORS[i % HELD_COLORS.length] ?? '',
    },
  ]);
}
