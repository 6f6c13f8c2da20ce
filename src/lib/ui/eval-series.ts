import type { EvalPoint } from './run-state.svelte';

/** One line of the chart (the shape `Chart.svelte` draws): a value per point, NaN for a gap. */
export interface EvalLine {
  label: string;
  values: number[];
  color: string;
  /** Dash pattern of the line, px (solid when absent). */
  dash?: number[];
}

const TRAIN_COLORS = ['#4ade80', '#22d3ee', '#a78bfa'];
const HELD_COLORS = ['#fbbf24', '#fb923c', '#f43f5e'];
const GENERAL_COLORS = ['#60a5fa', '#818cf8', '#e879f9'];
const REVISE_COLORS = ['#f472b6', '#c084fc', '#94a3b8'];
/** The revise line is dashed: a rate of another kind than the success lines beside it. */
const REVISE_DASH = [6, 4];
export const REVISE_LABEL = 'revised after a failed run';

/**
 * Held-out revise rate of a point (success on the turn after a failed run): NaN where no run
 * failed (null) and in points of examples runs or stored before the rate existed.
 */
const reviseOf = (e: EvalPoint): number => e.toolUse?.reviseRate ?? NaN;

/** Generalisation success of a point: NaN where none was scored (and in points stored before it was). */
const generalOf = (e: EvalPoint): number => e.successGeneralisation ?? NaN;

/** The task set a point was evaluated on: the run's own suite, or the level's built-in tasks. */
const setOf = (e: EvalPoint): string => (e.suite ? `"${e.suite}"` : e.level);

/**
 * The greedy-success chart's lines: training, held-out and generalisation success per task set
 * evaluated (the generalisation line only once a point has it), and for a tool-use run the
 * held-out revise rate, dashed (only once a point carries tool-use figures; the
 * curriculum moves the evaluation to the level it trains, so that a promotion starts new lines
 * rather than a drop in the old ones); named by the set once there is more than one.
 */
export function evalSeries(points: readonly EvalPoint[]): EvalLine[] {
  const sets = [...new Set(points.map(setOf))];
  const general = points.some((e) => Number.isFinite(generalOf(e)));
  const revise = points.some((e) => e.toolUse !== undefined);
  if (sets.length <= 1) {
    const lines: EvalLine[] = [
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
    if (revise)
      lines.push({
        label: REVISE_LABEL,
        values: points.map(reviseOf),
        color: REVISE_COLORS[0] ?? '',
        dash: REVISE_DASH,
      });
    return lines;
  }
  return sets.flatMap((set, i): EvalLine[] => [
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
    ...(revise
      ? [
          {
            label: `${REVISE_LABEL} (${set})`,
            values: points.map((e) => (setOf(e) === set ? reviseOf(e) : NaN)),
            color: REVISE_COLORS[i % REVISE_COLORS.length] ?? '',
            dash: REVISE_DASH,
          },
        ]
      : []),
  ]);
}
