import { band } from '../run/sweep-summary';

/**
 * The staleness sweep's chart (AReaL's Table 3 as a figure): greedy success against η, one line
 * per policy loss, a point per leg as it finishes; and the policy-lag figures of each η.
 */

/** What the chart reads of a leg of the sweep. */
export interface SweepLegView {
  eta: number;
  loss: string;
  success: { train: number; heldOut: number | null } | null;
  lag: { kl: number; clipped: number; masked: number };
}

/** A tick of the η axis: one per η of the sweep, in order, unbounded last. */
export interface SweepTick {
  eta: number;
  label: string;
}

/**
 * One loss's line: its training success per tick, the mean over the cell's finished seeds (null:
 * none finished), and their standard deviation (0 for one seed).
 */
export interface SweepLine {
  loss: string;
  label: string;
  color: string;
  values: (number | null)[];
  sds: (number | null)[];
}

/** An η's row of the lag table: the leg of each loss there (null: not finished). */
export interface SweepLagRow {
  tick: SweepTick;
  ppo: SweepLegView | null;
  decoupled: SweepLegView | null;
}

const LOSS_NAMES: Record<string, string> = { ppo: 'standard PPO', decoupled: 'decoupled PPO' };
const LOSS_COLORS: Record<string, string> = { ppo: '#fbbf24', decoupled: '#4ade80' };

/** How the chart names a loss. */
export const lossName = (loss: string): string => LOSS_NAMES[loss] ?? loss;

/** η as the axis says it: ∞ for unbounded. */
export const etaTick = (eta: number): string => (Number.isFinite(eta) ? String(eta) : '∞');

/** A small share, as the lag columns write it: masked shares are often under 0.1 %. */
export const fineShare = (v: number): string => `${(v * 100).toFixed(2)}%`;

/** The η axis of a sweep over `etas`: each η once, ascending (∞ last). */
export function sweepTicks(etas: readonly number[]): SweepTick[] {
  return [...new Set(etas)].sort((a, b) => a - b).map((eta) => ({ eta, label: etaTick(eta) }));
}

/** The leg of `loss` at `eta`, if it finished. */
const legAt = (legs: readonly SweepLegView[], eta: number, loss: string) =>
  legs.find((l) => l.eta === eta && l.loss === loss) ?? null;

/** The chart's lines: one per loss of the plan (in its order), a value per tick where the leg finished. */
export function sweepLines(
  plan: readonly { eta: number; loss?: string }[],
  legs: readonly SweepLegView[],
): { ticks: SweepTick[]; lines: SweepLine[] } {
  const ticks = sweepTicks(plan.map((p) => p.eta));
  const losses = [...new Set(plan.map((p) => p.loss ?? ''))];
  const cell = (eta: number, loss: string) => {
    const xs = legs.flatMap((l) => (l.eta === eta && l.loss === loss && l.success ? [l.success.train] : []));
    return xs.length ? band(xs) : null;
  };
  const lines = losses.map((loss) => {
    const bands = ticks.map((t) => cell(t.eta, loss));
    return {
      loss,
      label: lossName(loss),
      color: LOSS_COLORS[loss] ?? '#94a3b8',
      values: bands.map((b) => b?.mean ?? null),
      sds: bands.map((b) => b?.sd ?? null),
    };
  });
  return { ticks, lines };
}

/** The lag table's rows: one per tick, with the standard-PPO and decoupled-PPO legs there. */
export function sweepLagRows(ticks: readonly SweepTick[], legs: readonly SweepLegView[]): SweepLagRow[] {
  return ticks.map((tick) => ({
    tick,
    ppo: legAt(legs, tick.eta, 'ppo'),
    decoupled: legAt(legs, tick.eta, 'decoupled'),
  }));
}

/** Where the plot sits in its SVG, px. */
export interface PlotBox {
  width: number;
  height: number;
  /** Room left of the plot (y labels) and below it (x labels). */
  left: number;
  bottom: number;
  /** Room above and right of the plot. */
  top: number;
  right: number;
}

/** x of tick `i` of `n`, evenly spaced inside the plot (a lone tick in its middle). */
export function tickX(i: number, n: number, box: PlotBox): number {
  const w = box.width - box.left - box.right;
  return n <= 1 ? box.left + w / 2 : box.left + (w * i) / (n - 1);
}

/** y of a success rate in [0, 1] (1 at the top). */
export function rateY(v: number, box: PlotBox): number {
  const h = box.height - box.top - box.bottom;
  return box.top + h * (1 - Math.min(1, Math.max(0, v)));
}

/** An SVG path through a line's finished points, broken where a leg has not finished ('' for none). */
export function linePath(values: readonly (number | null)[], box: PlotBox): string {
  let path = '';
  let pen = false;
  values.forEach((v, i) => {
    if (v === null) {
      pen = false;
      return;
    }
    const [x, y] = [tickX(i, values.length, box), rateY(v, box)];
    path += `${pen ? 'L' : 'M'}${x.toFixed(1)} ${y.toFixed(1)}`;
    pen = true;
  });
  return path;
}
