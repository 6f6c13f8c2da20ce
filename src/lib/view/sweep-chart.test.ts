import { describe, expect, it } from 'vitest';
import { bandPath, bandText, fieldSweepTicks } from './field-sweep-chart';
import {
  fineShare,
  linePath,
  rateY,
  sweepLagRows,
  sweepLines,
  sweepTicks,
  tickX,
  type PlotBox,
  type SweepLegView,
} from './sweep-chart';

const leg = (eta: number, loss: string, train: number, kl = 0): SweepLegView => ({
  eta,
  loss,
  success: { train, heldOut: null },
  lag: { kl, clipped: 0.1, masked: 0 },
});

const plan = [0, 8, Infinity].flatMap((eta) => ['ppo', 'decoupled'].map((loss) => ({ eta, loss })));
const box: PlotBox = { width: 240, height: 120, left: 30, right: 10, top: 10, bottom: 10 };

describe('sweep chart', () => {
  it('puts each η on the axis once, ascending, with unbounded last as ∞', () => {
    expect(sweepTicks([Infinity, 2, 0, 2])).toEqual([
      { eta: 0, label: '0' },
      { eta: 2, label: '2' },
      { eta: Infinity, label: '∞' },
    ]);
  });

  it('draws a line per loss, filled in as legs finish', () => {
    const { ticks, lines } = sweepLines(plan, [
      leg(0, 'ppo', 0.5),
      leg(0, 'decoupled', 0.75),
      leg(8, 'ppo', 0.25),
    ]);
    expect(ticks.map((t) => t.label)).toEqual(['0', '8', '∞']);
    expect(lines.map((l) => [l.label, l.values])).toEqual([
      ['standard PPO', [0.5, 0.25, null]],
      ['decoupled PPO', [0.75, null, null]],
    ]);
    expect(lines[0]?.color).not.toBe(lines[1]?.color);
    // Before any leg: both lines, no points.
    expect(sweepLines(plan, []).lines.map((l) => l.values)).toEqual([
      [null, null, null],
      [null, null, null],
    ]);
  });

  it('pairs the legs of each η for the lag table', () => {
    const rows = sweepLagRows(sweepTicks([0, 8]), [leg(8, 'decoupled', 0.5, 0.12), leg(0, 'ppo', 0.5)]);
    expect(rows.map((r) => [r.tick.label, r.ppo?.eta ?? null, r.decoupled?.lag.kl ?? null])).toEqual([
      ['0', 0, null],
      ['8', null, 0.12],
    ]);
  });

  it('places ticks across the plot and rates from its bottom (0) to its top (1)', () => {
    expect(tickX(0, 3, box)).toBe(30);
    expect(tickX(2, 3, box)).toBe(230);
    expect(tickX(0, 1, box)).toBe(130);
    expect(rateY(0, box)).toBe(110);
    expect(rateY(1, box)).toBe(10);
    expect(rateY(1.5, box)).toBe(10);
  });

  it('writes small shares to a hundredth of a percent', () => {
    expect(fineShare(0.0004)).toBe('0.04%');
    expect(fineShare(0.2237)).toBe('22.37%');
  });

  it('breaks a line where a leg has not finished', () => {
    expect(linePath([0, 1, null], box)).toBe('M30.0 110.0L130.0 10.0');
    expect(linePath([0, null, 1], box)).toBe('M30.0 110.0M230.0 10.0');
    expect(linePath([null, null], box)).toBe('');
  });
});

describe('the staleness sweep with seeds', () => {
  it('draws each cell at the mean of its finished seeds, with their sd', () => {
    const plan = [1, 2].map((seed) => ({ eta: 0, loss: 'ppo', seed }));
    const { lines } = sweepLines(plan, [leg(0, 'ppo', 0.4), leg(0, 'ppo', 0.6)]);
    expect(lines.map((l) => [l.values, l.sds])).toEqual([[[0.5], [0.141]]]);
  });
});

describe('the field sweep chart', () => {
  const plan = [0.1, 0.1, 0.3, 0.3].map((value, i) => ({
    field: { path: 'learner.clipEps', value },
    seed: (i % 2) + 1,
  }));
  const leg = (value: number, seed: number, train: number, heldOut: number | null = null) => ({
    field: { path: 'learner.clipEps', value },
    seed,
    success: { train, heldOut },
  });

  it('summarises each value over its finished seeds, a value with none left empty', () => {
    const ticks = fieldSweepTicks(plan, [leg(0.1, 1, 0.4, 0.2), leg(0.1, 2, 0.6, 0.4)]);
    expect(ticks.map((t) => [t.label, t.planned, t.point?.train, t.point?.heldOut])).toEqual([
      ['0.1', 2, { mean: 0.5, sd: 0.141 }, { mean: 0.3, sd: 0.141 }],
      ['0.3', 2, undefined, undefined],
    ]);
    expect(bandText(ticks[0]?.point?.train ?? null)).toBe('50% ± 14%');
    expect(bandText(null)).toBe('–');
  });

  it('draws a band from mean − sd to mean + sd through the finished values', () => {
    const box = { width: 140, height: 120, left: 20, right: 20, top: 10, bottom: 10 };
    const ticks = fieldSweepTicks(plan, [
      leg(0.1, 1, 0.4),
      leg(0.1, 2, 0.6),
      leg(0.3, 1, 0.5),
      leg(0.3, 2, 0.5),
    ]);
    // x at 20 and 120; y = 10 + 100 (1 − v).
    expect(bandPath(ticks, (p) => p.train, box)).toBe('20.0,45.9 120.0,60.0 120.0,60.0 20.0,74.1');
    expect(bandPath(fieldSweepTicks(plan, []), (p) => p.train, box)).toBe('');
  });
});
