import { describe, expect, it } from 'vitest';
import { METRICS } from '../pipeline/controller.fakes';
import type { StepReport } from '../pipeline/types';
import { curveCharts, curveMarks, CURVES, thinIndices } from './curves';
import type { DoctorMark } from './doctor-notices';

/** A step at `version` whose figures all follow `f(version)`. */
const step = (version: number, f: (v: number) => number = (v) => v, extra: Partial<StepReport> = {}) =>
  ({
    version,
    episodes: 4,
    meanReturn: 0,
    success: 0,
    staleness: [0],
    loss: 0,
    metrics: {
      ...METRICS,
      pgLoss: f(version),
      valueLoss: f(version) * 2,
      entropy: f(version),
      approxKl: f(version),
      gradNorm: f(version),
      clipFrac: 0.1,
    },
    waitMs: 0,
    trainMs: 0,
    at: 0,
    returnSpread: 0.5,
    meanTurns: 2,
    meanTokens: 30,
    ...extra,
  }) satisfies StepReport;

const chart = (charts: ReturnType<typeof curveCharts>, id: string) => {
  const c = charts.find((x) => x.id === id);
  if (!c) throw new Error(`no curve ${id}`);
  return c;
};

describe('training curves', () => {
  it('draws one chart per figure, each value of its step, with its unit', () => {
    const charts = curveCharts([step(1), step(2), step(3)]);
    expect(charts.map((c) => c.id)).toEqual([
      'policy-loss',
      'value-loss',
      'entropy',
      'approx-kl',
      'grad-norm',
      'clipped',
      'turns',
      'tokens',
      'spread',
    ]);
    expect(chart(charts, 'value-loss').x).toEqual([1, 2, 3]);
    expect(chart(charts, 'value-loss').series[0]?.values).toEqual([2, 4, 6]);
    expect(chart(charts, 'tokens').series[0]?.values).toEqual([30, 30, 30]);
    expect(chart(charts, 'clipped').percent).toBe(true);
    expect(chart(charts, 'grad-norm').unit).toContain('before clipping');
    expect(charts.every((c) => c.recorded)).toBe(true);
  });

  it('leaves a gap where a step did not record a figure, and says when none did', () => {
    const old = step(2, undefined, { meanTurns: undefined, meanTokens: undefined, returnSpread: undefined });
    const nan = step(3, () => NaN);
    const charts = curveCharts([step(1), old, nan]);
    expect(chart(charts, 'spread').series[0]?.values).toEqual([0.5, NaN, 0.5]);
    expect(chart(charts, 'grad-norm').series[0]?.values).toEqual([1, 2, NaN]);
    // A run whose steps never recorded tokens (a custom environment): the curve says so.
    const custom = curveCharts([step(1, undefined, { meanTokens: undefined })]);
    expect(chart(custom, 'tokens').recorded).toBe(false);
    expect(chart(custom, 'turns').recorded).toBe(true);
  });

  it('keeps every point of a short run', () => {
    expect(thinIndices([[1, 2, 3]], 3, 500)).toEqual([0, 1, 2]);
  });

  it('thins a long run to at most the cap, keeping the first, the last, each bucket’s extremes and gaps', () => {
    const n = 2000;
    const col = Array.from({ length: n }, (_, i) => Math.sin(i / 50));
    col[777] = 40; // a gradient spike
    col[1234] = -40;
    col[1500] = NaN; // a step that did not record it
    const kept = thinIndices([col], n, 500);
    expect(kept.length).toBeLessThanOrEqual(500);
    expect(kept.length).toBeGreaterThan(200);
    expect(kept[0]).toBe(0);
    expect(kept.at(-1)).toBe(n - 1);
    expect(kept).toContain(777);
    expect(kept).toContain(1234);
    expect(kept).toContain(1500);
    expect([...kept].sort((a, b) => a - b)).toEqual(kept);
    expect(new Set(kept).size).toBe(kept.length);
  });

  it('thins every curve of a long run to at most CURVE_POINTS, versions in order', () => {
    const steps = Array.from({ length: 1800 }, (_, i) => step(i + 1, (v) => (v === 900 ? 1e3 : v % 7)));
    for (const c of curveCharts(steps)) {
      expect(c.x.length).toBeLessThanOrEqual(500);
      expect(c.x[0]).toBe(1);
      expect(c.x.at(-1)).toBe(1800);
      expect(c.series[0]?.values.length).toBe(c.x.length);
    }
    const g = chart(curveCharts(steps), 'grad-norm');
    expect(g.x).toContain(900);
    expect(Math.max(...(g.series[0]?.values ?? []))).toBe(1e3);
  });

  it('marks on a curve the findings of the detectors that read its figure', () => {
    const mark = (id: DoctorMark['id'], version: number): DoctorMark => ({
      id,
      version,
      severity: 'warning',
      color: '#fff',
      label: id,
    });
    const marks = [mark('grad-spikes', 10), mark('entropy-collapse', 20), mark('non-finite', 30)];
    const charts = curveCharts([step(1)]);
    expect(curveMarks(chart(charts, 'grad-norm'), marks).map((m) => m.version)).toEqual([10, 30]);
    expect(curveMarks(chart(charts, 'entropy'), marks).map((m) => m.version)).toEqual([20]);
    expect(curveMarks(chart(charts, 'turns'), marks)).toEqual([]);
    // Every curve has a title, a unit, and a y-axis label short enough for a 130 px plot.
    expect(CURVES.every((c) => c.unit.length > 0 && c.title.length > 0)).toBe(true);
    expect(CURVES.every((c) => c.axis.length > 0 && c.axis.length <= 10)).toBe(true);
  });
});
