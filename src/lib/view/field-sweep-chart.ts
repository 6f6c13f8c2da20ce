import type { SweepValue } from '../config/field-sweep';
import { summariseFieldSweep, sweepOrder, type Band, type FieldSweepPoint } from '../run/sweep-summary';
import { tickX, rateY, type PlotBox } from './sweep-chart';

/**
 * A field sweep's chart: final greedy success against the field's value, a point per value at
 * the mean over its seeds with a ±1 sd band, as legs finish; and the second figure (held-out).
 */

/** What the chart reads of a leg. */
export interface FieldLegView {
  field?: { path: string; value: SweepValue };
  seed?: number;
  success: { train: number; heldOut: number | null } | null;
}

/** A value on the axis: its label, and its summary once at least one of its legs has finished. */
export interface FieldSweepTick {
  value: SweepValue;
  label: string;
  /** Legs of this value planned, and finished. */
  planned: number;
  point: FieldSweepPoint | null;
}

/** A value as the axis says it (∞ for an unbounded η; short for small and large numbers; a choice's name). */
export const valueLabel = (v: SweepValue): string =>
  typeof v === 'string'
    ? v
    : !Number.isFinite(v)
      ? '∞'
      : Math.abs(v) >= 1e4 || (v !== 0 && Math.abs(v) < 1e-3)
        ? v.toExponential(1)
        : String(v);

/** The chart's ticks: each value of the plan once (`sweepOrder`), with its finished legs summarised. */
export function fieldSweepTicks(
  plan: readonly { field?: { value: SweepValue } }[],
  legs: readonly FieldLegView[],
): FieldSweepTick[] {
  const values = sweepOrder(plan.flatMap((p) => (p.field ? [p.field.value] : [])));
  const points = summariseFieldSweep(
    legs.flatMap((l) =>
      l.field && l.success
        ? [
            {
              value: l.field.value,
              seed: l.seed ?? 0,
              successTrain: l.success.train,
              successHeldOut: l.success.heldOut,
            },
          ]
        : [],
    ),
  );
  return values.map((value) => ({
    value,
    label: valueLabel(value),
    planned: plan.filter((p) => p.field?.value === value).length,
    point: points.find((p) => p.value === value) ?? null,
  }));
}

/** The ±1 sd band of a figure as an SVG polygon through the finished ticks ('' for fewer than one). */
export function bandPath(
  ticks: readonly FieldSweepTick[],
  pick: (p: FieldSweepPoint) => Band | null,
  box: PlotBox,
): string {
  const at = ticks.flatMap((t, i) => {
    const b = t.point ? pick(t.point) : null;
    return b ? [{ x: tickX(i, ticks.length, box), b }] : [];
  });
  if (at.length === 0) return '';
  // A lone point: a narrow box around it, so its band still shows.
  const [lone] = at;
  const pts =
    at.length === 1 && lone
      ? [
          { ...lone, x: lone.x - 6 },
          { ...lone, x: lone.x + 6 },
        ]
      : at;
  const top = pts.map((p) => `${p.x.toFixed(1)},${rateY(p.b.mean + p.b.sd, box).toFixed(1)}`);
  const bottom = [...pts]
    .reverse()
    .map((p) => `${p.x.toFixed(1)},${rateY(p.b.mean - p.b.sd, box).toFixed(1)}`);
  return [...top, ...bottom].join(' ');
}

/** A figure as the table writes it: `62% ± 8%` (– where there is none). */
export function bandText(b: Band | null): string {
  if (!b || !Number.isFinite(b.mean)) return '–';
  return `${Math.round(b.mean * 100)}% ± ${Math.round(b.sd * 100)}%`;
}
