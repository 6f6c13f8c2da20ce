import type { EvalPoint } from './run-state.svelte';

/** One line of the chart (the shape `Chart.svelte` draws): a value per point, NaN for a gap. */
export interface EvalLine {
  label: string;
  values: number[];
  color: string;
}

const TRAIN_COLORS = ['#4ade80', '#22d3ee', '#a78bfa'];
const HELD_COLORS = ['#fbbf24', '#fb923c', '#f43f5e'];
const GENERAL_COLORS = ['#60a5fa', '#818cf8', '#e879f9'];

/** Generalisation success of a point: NaN where none was scored (and in points stored before it was). */
const generalOf = (e: EvalPoint): number => e.successGeneralisation ?? NaN;

/** The task set a point was evaluated on: the run's own suite, or the level's built-in tasks. */
const setOf = (e: EvalPoint): string => (e.suite ? `"${e.suite}"` : e.level);

/**
 * The greedy-success chart's lines: training, held-out and generalisation success per task set
 * evaluated (the generalisation line only once a point has it; the
 * curriculum moves the evaluation to the level it trains, so that a promotion starts new lines
 * rather than a drop in the old ones); named by the set once there is more than one.
 */
export function evalSeries(points: readonly EvalPoint[]): EvalLine[] {
  const sets = [...new Set(points.map(setOf))];
  const general = points.some((e) => Number.isFinite(generalOf(e)));
  if (sets.length <= 1) {
    const lines = [
      { label: 'training tasks', values: points.map((e) => e.successTrain), color: TRAIN_COLORS[0] ?? '' },
      {
        label: 'held-out tasks',
        values: points.map((e) => e.successHeldOut ?? NaN),
        color: HELD_COLORS[0] ?? '',
      },
    ];
    if (general)
      lines.push({
        label: 'generalisation tasks',
        values: points.map(generalOf),
        color: GENERAL_COLORS[0] ?? '',
      });
    return lines;
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
    ...(general
      ? [
          {
            label: `generalisation tasks (${set})`,
            values: points.map((e) => (setOf(e) === set ? generalOf(e) : NaN)),
            color: GENERAL_COLORS[i % GENERAL_COLORS.length] ?? '',
          },
        ]
      : []),
  ]);
}
