import type { SweepValue } from '../config/field-sweep';
/**
 * The staleness sweep's figures (AReaL's Table 3): runs of η × {standard PPO, decoupled PPO} ×
 * seeds, each from fresh weights over the same samples, summarised per cell as mean ± sd, and the
 * separation of the two losses at the largest finite η and at η = 0.
 */

/** One run of the sweep: its cell, its seed, and what it came to. */
export interface SweepRun {
  eta: number;
  loss: string;
  seed: number;
  /** Greedy success on the level's training tasks and its held-out tasks (null: not evaluated). */
  successTrain: number;
  successHeldOut: number | null;
  /** Mean staleness of the trained samples, versions. */
  meanStaleness: number;
  /** Other figures of the run (versions, clip fraction, …), carried as they are. */
  [figure: string]: number | string | null;
}

/** Mean and sample standard deviation (0 for one value). */
export interface Band {
  mean: number;
  sd: number;
}

/** A cell of the sweep: one η and one loss over its seeds. */
export interface SweepCell {
  eta: number;
  loss: string;
  seeds: number[];
  train: Band;
  heldOut: Band | null;
  meanStaleness: number;
}

/** Decoupled PPO's mean success minus standard PPO's at one η, and whether their ±1 sd bands are apart. */
export interface Separation {
  eta: number;
  train: number;
  heldOut: number | null;
  /** The ±1 sd bands of training success do not overlap. */
  apart: boolean;
}

export interface SweepSummary {
  cells: SweepCell[];
  /** At the largest finite η of the sweep, and at η = 0 (null where the sweep lacks either loss there). */
  separation: { largest: Separation | null; zero: Separation | null };
}

const round = (v: number) => Math.round(v * 1000) / 1000;

/** Mean and sample standard deviation of `xs` (NaN mean for none). */
export function band(xs: readonly number[]): Band {
  const n = xs.length;
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const sd = n > 1 ? Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1)) : 0;
  return { mean: round(mean), sd: round(sd) };
}

/** The sweep's cells in the order their runs came, and the two losses' separation. */
export function summariseSweep(runs: readonly SweepRun[]): SweepSummary {
  const keys: string[] = [];
  const byCell = new Map<string, SweepRun[]>();
  for (const r of runs) {
    const key = `${r.eta}|${r.loss}`;
    if (!byCell.has(key)) keys.push(key);
    byCell.set(key, [...(byCell.get(key) ?? []), r]);
  }
  const cells = keys.map((key): SweepCell => {
    const rs = byCell.get(key) ?? [];
    const held = rs.map((r) => r.successHeldOut);
    return {
      eta: rs[0]?.eta ?? NaN,
      loss: rs[0]?.loss ?? '',
      seeds: rs.map((r) => r.seed),
      train: band(rs.map((r) => r.successTrain)),
      heldOut: held.every((h): h is number => h !== null) ? band(held) : null,
      meanStaleness: round(rs.reduce((a, r) => a + r.meanStaleness, 0) / rs.length),
    };
  });
  const at = (eta: number): Separation | null => {
    const ppo = cells.find((c) => c.eta === eta && c.loss === 'ppo');
    const dec = cells.find((c) => c.eta === eta && c.loss === 'decoupled');
    if (!ppo || !dec) return null;
    const [low, high] = ppo.train.mean <= dec.train.mean ? [ppo, dec] : [dec, ppo];
    return {
      eta,
      train: round(dec.train.mean - ppo.train.mean),
      heldOut: ppo.heldOut && dec.heldOut ? round(dec.heldOut.mean - ppo.heldOut.mean) : null,
      apart: low.train.mean + low.train.sd < high.train.mean - high.train.sd,
    };
  };
  const finite = cells.map((c) => c.eta).filter((e) => Number.isFinite(e));
  return {
    cells,
    separation: { largest: finite.length ? at(Math.max(...finite)) : null, zero: at(0) },
  };
}

/** One leg of a field sweep (`config/field-sweep.ts`): the field's value, its seed, what it came to. */
export interface FieldSweepRun {
  value: SweepValue;
  seed: number;
  /** Final greedy success on the training tasks, and on the held-out tasks (null: not evaluated). */
  successTrain: number;
  successHeldOut: number | null;
}

/** A value of a field sweep over its seeds: final greedy success (train, held-out) as mean ± sd. */
export interface FieldSweepPoint {
  value: SweepValue;
  seeds: number[];
  train: Band;
  /** Null unless every seed's run has a held-out figure. */
  heldOut: Band | null;
}

/** A sweep's distinct values in axis order: numbers ascending, a choice field's names as first given. */
export function sweepOrder(values: readonly SweepValue[]): SweepValue[] {
  const distinct = [...new Set(values)];
  return distinct.every((v) => typeof v === 'number') ? distinct.sort((a, b) => a - b) : distinct;
}

/** A field sweep's points, one per value, in `sweepOrder`. */
export function summariseFieldSweep(runs: readonly FieldSweepRun[]): FieldSweepPoint[] {
  const values = sweepOrder(runs.map((r) => r.value));
  return values.map((value) => {
    const rs = runs.filter((r) => r.value === value);
    const held = rs.map((r) => r.successHeldOut);
    return {
      value,
      seeds: rs.map((r) => r.seed),
      train: band(rs.map((r) => r.successTrain)),
      heldOut: held.every((h): h is number => h !== null) ? band(held) : null,
    };
  });
}
