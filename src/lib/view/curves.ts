/**
 * The training curves of the Figures view (pure): one small chart per trainer figure over versions
 * — policy loss, value loss, entropy, approx-KL, gradient norm, clipped share, episode length in
 * turns and in tokens, per-task reward spread — thinned for long runs, a missing value a gap.
 */
import type { StepReport } from '../pipeline/types';
import type { DetectorId } from '../stats/doctor';
import type { DoctorMark } from './doctor-notices';

/** Points a curve draws at most: past it, versions are bucketed (`thinIndices`). */
export const CURVE_POINTS = 500;

/** One line of a curve: what it reads of a step (undefined or not finite: a gap). */
interface CurveLine {
  label: string;
  color: string;
  of: (s: StepReport) => number | undefined;
}

/** What a curve shows and how it says it. */
export interface CurveSpec {
  id: string;
  title: string;
  /** The figure's unit or what it counts, in words (the caption says it). */
  unit: string;
  /** The y axis's label: the unit in a word or two (it must fit the plot's height). */
  axis: string;
  /** What the figure is, for the chart's caption tooltip. */
  about: string;
  lines: readonly CurveLine[];
  /** The values are shares in [0, 1] (drawn and said as percentages). */
  percent?: boolean;
  /** The doctor's detectors whose findings are marked on this curve. */
  detectors: readonly DetectorId[];
}

/** One curve as its chart draws it: x the versions kept, a value per x and line (NaN: a gap). */
export interface CurveChart {
  id: string;
  title: string;
  unit: string;
  axis: string;
  about: string;
  percent: boolean;
  detectors: readonly DetectorId[];
  x: number[];
  series: { label: string; color: string; values: number[] }[];
  /** Whether any step recorded a finite value of it (a run of a custom environment has no tokens). */
  recorded: boolean;
}

/** The curves, in the order the grid shows them. */
export const CURVES: readonly CurveSpec[] = [
  {
    id: 'policy-loss',
    title: 'policy loss',
    unit: 'the loss’s policy term',
    axis: 'loss',
    about: 'the policy-gradient (PPO) part of the loss of each step',
    lines: [{ label: 'policy loss', color: '#38bdf8', of: (s) => s.metrics.pgLoss }],
    detectors: ['loss-volatile', 'non-finite'],
  },
  {
    id: 'value-loss',
    title: 'value loss',
    unit: 'squared error',
    axis: 'sq. error',
    about: 'the value head’s squared error against the returns of each step',
    lines: [{ label: 'value loss', color: '#a3e635', of: (s) => s.metrics.valueLoss }],
    detectors: ['value-diverging', 'non-finite'],
  },
  {
    id: 'entropy',
    title: 'entropy',
    unit: 'nats per token',
    axis: 'nats',
    about: 'the policy’s mean entropy over its sampled tokens: exploration, falling as it settles',
    lines: [{ label: 'entropy', color: '#c084fc', of: (s) => s.metrics.entropy }],
    detectors: ['entropy-collapse'],
  },
  {
    id: 'approx-kl',
    title: 'approx-KL',
    unit: 'nats',
    axis: 'nats',
    about: 'the k3 estimate of the KL between the policy before and after each step (0 for plain PG)',
    lines: [{ label: 'approx-KL', color: '#f472b6', of: (s) => s.metrics.approxKl }],
    detectors: ['steps-too-large'],
  },
  {
    id: 'grad-norm',
    title: 'gradient norm',
    unit: 'L2, before clipping',
    axis: 'L2 norm',
    about: 'the global gradient norm of each step before clipping',
    lines: [{ label: 'gradient norm', color: '#fbbf24', of: (s) => s.metrics.gradNorm }],
    detectors: ['grad-spikes', 'non-finite'],
  },
  {
    id: 'clipped',
    title: 'clipped share',
    unit: 'share of policy tokens',
    axis: 'share',
    about: 'the share of policy tokens whose ratio fell outside 1 ± ε',
    lines: [{ label: 'clipped', color: '#fb923c', of: (s) => s.metrics.clipFrac }],
    percent: true,
    detectors: ['steps-too-large'],
  },
  {
    id: 'turns',
    title: 'episode length (turns)',
    unit: 'turns per episode',
    axis: 'turns',
    about: 'the mean number of programs an episode of the step wrote',
    lines: [{ label: 'turns', color: '#2dd4bf', of: (s) => s.meanTurns }],
    detectors: [],
  },
  {
    id: 'tokens',
    title: 'episode length (tokens)',
    unit: 'policy tokens per episode',
    axis: 'tokens',
    about: 'the mean number of tokens the policy wrote in an episode of the step',
    lines: [{ label: 'tokens', color: '#60a5fa', of: (s) => s.meanTokens }],
    detectors: [],
  },
  {
    id: 'spread',
    title: 'per-task reward spread',
    unit: 'std of returns',
    axis: 'std',
    about: 'the standard deviation of returns within each task’s group, averaged over the step’s groups',
    lines: [{ label: 'reward spread', color: '#4ade80', of: (s) => s.returnSpread }],
    detectors: ['echo-trap'],
  },
];

/** A value as a chart draws it: a finite number, or NaN (a gap). */
const orGap = (v: number | undefined): number => (v !== undefined && Number.isFinite(v) ? v : NaN);

/**
 * The indices of `columns` (each a value per x) kept to draw at most about `cap` points: all when
 * they fit; else the x range is cut into equal buckets, and each bucket keeps its first and last
 * index and, per column, the index of its lowest and highest finite value and of its first gap
 * (NaN), so spikes and gaps survive thinning. Ascending, without repeats.
 */
export function thinIndices(columns: readonly (readonly number[])[], n: number, cap: number): number[] {
  const all = Array.from({ length: n }, (_, i) => i);
  if (n <= cap) return all;
  const perBucket = 2 + 3 * columns.length;
  const buckets = Math.max(1, Math.floor(cap / perBucket));
  const kept = new Set<number>();
  for (let b = 0; b < buckets; b++) {
    const lo = Math.floor((b * n) / buckets);
    const hi = Math.floor(((b + 1) * n) / buckets) - 1;
    if (hi < lo) continue;
    kept.add(lo).add(hi);
    for (const col of columns) {
      let [min, max, gap] = [-1, -1, -1];
      for (let i = lo; i <= hi; i++) {
        const v = col[i] ?? NaN;
        if (!Number.isFinite(v)) {
          if (gap < 0) gap = i;
          continue;
        }
        if (min < 0 || v < (col[min] ?? v)) min = i;
        if (max < 0 || v > (col[max] ?? v)) max = i;
      }
      for (const i of [min, max, gap]) if (i >= 0) kept.add(i);
    }
  }
  return [...kept].sort((a, b) => a - b);
}

/** The curves of `steps` (oldest first), each thinned to at most about `cap` points. */
export function curveCharts(steps: readonly StepReport[], cap = CURVE_POINTS): CurveChart[] {
  const versions = steps.map((s) => s.version);
  return CURVES.map((c) => {
    const columns = c.lines.map((l) => steps.map((s) => orGap(l.of(s))));
    const keep = thinIndices(columns, steps.length, cap);
    return {
      id: c.id,
      title: c.title,
      unit: c.unit,
      axis: c.axis,
      about: c.about,
      percent: c.percent ?? false,
      detectors: c.detectors,
      x: keep.map((i) => versions[i] ?? NaN),
      series: c.lines.map((l, k) => ({
        label: l.label,
        color: l.color,
        values: keep.map((i) => columns[k]?.[i] ?? NaN),
      })),
      recorded: columns.some((col) => col.some(Number.isFinite)),
    };
  });
}

/** The doctor's marks a curve draws: the findings of the detectors that read its figure. */
export function curveMarks<M extends Pick<DoctorMark, 'id'>>(
  chart: Pick<CurveChart, 'detectors'>,
  marks: readonly M[],
): M[] {
  return marks.filter((m) => chart.detectors.includes(m.id));
}
