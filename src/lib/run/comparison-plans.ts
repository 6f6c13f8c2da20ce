import type { LegStrip } from '../stats/leg-strip';
import type { RunConfig } from '../config/run-config';
import type { SweepLegSettings } from '../config/presets';
import type { FieldSweepLeg, SweepValue } from '../config/field-sweep';

/**
 * One leg of a comparison (the sync-vs-async race, the staleness sweep): a run from fresh weights
 * over the same number of trained samples as the other legs.
 */
export interface Leg {
  eta: number;
  /** Staleness held at η (a fixed lag: synchronous, the workers a fixed η versions behind), not bounded by it. */
  fixedLag: boolean;
  loss: RunConfig['learner']['loss'];
  /** The leg's seed, where its plan set one (a sweep over seeds). */
  seed?: number;
  /** A field sweep's leg: the field it set and the value. */
  field?: { path: string; value: SweepValue };
  runId: string | null;
  samplesPerSec: number;
  seconds: number;
  trainerBusy: number;
  /** (rollout + train) / max(rollout, train) per step: what overlapping the two could gain. */
  idealSpeedup: number;
  /** Mean staleness of the trained samples, versions (with a fixed lag too: tokens carry the version played). */
  meanStaleness: number;
  interrupts: number;
  staleDrops: number;
  /** Greedy success of the leg's last version (the sweep evaluates; the race does not). */
  success: { train: number; heldOut: number | null } | null;
  /**
   * The policy lag its steps measured, means over its steps: KL(π_behav ‖ π_prox) (decoupled PPO
   * only; standard PPO computes no π_prox), the share of tokens clipped, the share masked (w > cap).
   */
  lag: { kl: number; clipped: number; masked: number };
  /** The race's: the leg's trainer and rollout events, for its timeline strip (the sweep keeps none). */
  strip?: LegStrip | null;
}

/** A comparison in the run panel: its kind, the legs done, and the legs it runs (done or not). */
export interface Comparison {
  /** The race, the staleness sweep (η × loss × seeds), or a sweep of one field's values × seeds. */
  kind: 'race' | 'sweep' | 'field';
  legs: Leg[];
  plan: readonly LegPlan[];
  /** Episodes each leg trains on. */
  samples: number;
  /** A leg ended before its episodes (a Stop, an error): the legs after it did not run. */
  stopped?: boolean;
}

/** Episodes each leg of the race trains on (about 40 versions). */
export const RACE_SAMPLES = 640;
/**
 * Episodes each leg of the staleness sweep trains on, its η values and its losses: every η with
 * standard PPO, then decoupled PPO, so both lines of its chart grow together. Six legs of 1 600
 * episodes (100 versions each) took 250 s with the page's defaults on 2 shared cores (one rollout
 * worker, trainer on wasm): what fits in about five minutes. With one worker the staleness stays
 * near 1.5–2 versions whatever η allows, so η = 8 is the largest the sweep needs, and η = 2 sits
 * between it and the synchronous legs.
 */
export const SWEEP_SAMPLES = 1600;
export const SWEEP_ETAS: readonly number[] = [0, 2, 8];
export const SWEEP_LOSSES: readonly RunConfig['learner']['loss'][] = ['ppo', 'decoupled'];

/**
 * A leg to run: its η, its loss (none: the panel's, as the race runs), its seed (none: the
 * panel's), and what its sweep sets. A field sweep's leg names its field and value, set in its
 * `config`; η and the lag are then the panel's (or the field's, when the field is one of them).
 */
export interface LegPlan extends SweepLegSettings {
  eta: number;
  loss?: RunConfig['learner']['loss'];
  seed?: number;
  field?: { path: string; value: SweepValue };
}

/**
 * The staleness sweep's legs: each η of `etas` with each loss of `losses`, η by η, each with
 * `shared`, each with every seed of `seeds` (none: one leg a cell, on the panel's seed).
 */
export const sweepPlan = (
  etas: readonly number[],
  losses: readonly RunConfig['learner']['loss'][] = SWEEP_LOSSES,
  shared: SweepLegSettings = {},
  seeds: readonly number[] = [],
): LegPlan[] => {
  if (shared.fixedLag && !etas.every(Number.isFinite)) throw new Error('a fixed lag needs a finite η');
  const cell = (eta: number, loss: RunConfig['learner']['loss']): LegPlan[] =>
    seeds.length ? seeds.map((seed) => ({ eta, loss, seed, ...shared })) : [{ eta, loss, ...shared }];
  return etas.flatMap((eta) => losses.flatMap((loss) => cell(eta, loss)));
};

/** A field sweep's legs (`fieldSweepLegs`) as the comparison runs them, at the panel's η. */
export const fieldSweepPlan = (legs: readonly FieldSweepLeg[], panelEta: number): LegPlan[] =>
  legs.map((l) => ({
    eta: l.path === 'pipeline.eta' && typeof l.value === 'number' ? l.value : panelEta,
    seed: l.seed,
    field: { path: l.path, value: l.value },
    config: l.overrides,
  }));

/** The race's two η: synchronous, then the panel's (4 when the panel's is 0). */
export const raceEtas = (panelEta: number): number[] => [0, panelEta > 0 ? panelEta : 4];
