import { describe, expect, it } from 'vitest';
import { band, summariseFieldSweep, summariseSweep, sweepOrder, type SweepRun } from './sweep-summary';

const run = (
  eta: number,
  loss: string,
  seed: number,
  train: number,
  held: number | null = 0.1,
): SweepRun => ({
  eta,
  loss,
  seed,
  successTrain: train,
  successHeldOut: held,
  meanStaleness: eta,
});

describe('the staleness sweep summary', () => {
  it('gives the mean and the sample standard deviation', () => {
    expect(band([0.2, 0.4, 0.6])).toEqual({ mean: 0.4, sd: 0.2 });
    expect(band([0.5])).toEqual({ mean: 0.5, sd: 0 });
  });

  it('summarises each cell over its seeds, in the order the runs came', () => {
    const s = summariseSweep([
      run(0, 'ppo', 1, 0.5),
      run(0, 'ppo', 2, 0.7),
      run(0, 'decoupled', 1, 0.6),
      run(0, 'decoupled', 2, 0.6),
    ]);
    expect(s.cells.map((c) => [c.eta, c.loss, c.seeds])).toEqual([
      [0, 'ppo', [1, 2]],
      [0, 'decoupled', [1, 2]],
    ]);
    expect(s.cells[0]?.train).toEqual({ mean: 0.6, sd: 0.141 });
    expect(s.cells[0]?.heldOut).toEqual({ mean: 0.1, sd: 0 });
  });

  it('separates the losses at the largest finite η and at 0, and says whether the ±1 sd bands are apart', () => {
    const s = summariseSweep([
      run(0, 'ppo', 1, 0.6),
      run(0, 'ppo', 2, 0.62),
      run(0, 'decoupled', 1, 0.61),
      run(0, 'decoupled', 2, 0.63),
      run(8, 'ppo', 1, 0.2),
      run(8, 'ppo', 2, 0.3),
      run(8, 'decoupled', 1, 0.6),
      run(8, 'decoupled', 2, 0.5),
      run(Infinity, 'ppo', 1, 0),
      run(Infinity, 'decoupled', 1, 1),
    ]);
    expect(s.separation.largest).toEqual({ eta: 8, train: 0.3, heldOut: 0, apart: true });
    expect(s.separation.zero).toMatchObject({ eta: 0, train: 0.01, apart: false });
  });

  it('has no separation where a loss is missing, and no held-out band where a run was not evaluated on it', () => {
    const s = summariseSweep([run(4, 'decoupled', 1, 0.5, null), run(4, 'decoupled', 2, 0.5)]);
    expect(s.cells[0]?.heldOut).toBeNull();
    expect(s.separation).toEqual({ largest: null, zero: null });
  });
});

describe('the field sweep summary', () => {
  it('gives each value’s final success as mean ± sd over its seeds, values ascending', () => {
    const points = summariseFieldSweep([
      { value: 0.3, seed: 1, successTrain: 0.5, successHeldOut: 0.2 },
      { value: 0.3, seed: 2, successTrain: 0.7, successHeldOut: null },
      { value: 0.1, seed: 1, successTrain: 0.4, successHeldOut: 0.1 },
      { value: 0.1, seed: 2, successTrain: 0.6, successHeldOut: 0.3 },
    ]);
    expect(points).toEqual([
      { value: 0.1, seeds: [1, 2], train: { mean: 0.5, sd: 0.141 }, heldOut: { mean: 0.2, sd: 0.141 } },
      { value: 0.3, seeds: [1, 2], train: { mean: 0.6, sd: 0.141 }, heldOut: null },
    ]);
  });

  it('keeps a choice field’s values in the order first given (a comparison: strategies)', () => {
    const points = summariseFieldSweep([
      { value: 'full', seed: 1, successTrain: 0.5, successHeldOut: null },
      { value: 'frozen', seed: 1, successTrain: 0.3, successHeldOut: null },
      { value: 'full', seed: 2, successTrain: 0.7, successHeldOut: null },
    ]);
    expect(points.map((p) => [p.value, p.seeds, p.train.mean])).toEqual([
      ['full', [1, 2], 0.6],
      ['frozen', [1], 0.3],
    ]);
    expect(sweepOrder([4, 0, 2, 0])).toEqual([0, 2, 4]);
  });
});
