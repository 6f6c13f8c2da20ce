import type { CurriculumView } from '../env/curriculum';
import type { Level } from '../env/suite';
import type { PipelineCounters } from '../pipeline/controller';
import type { TimelineEvent } from '../pipeline/events';
import { stepThroughput } from '../stats/metrics';
import { legStrip, type LegStrip } from '../stats/leg-strip';
import { withinOverrides, type RunConfig, type RunOverrides } from '../config/run-config';
import type { SweepLegSettings } from '../config/presets';
import type { FieldSweepLeg } from '../config/field-sweep';
import type { EvalPoint, StepReport } from '../pipeline/types';

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
  field?: { path: string; value: number };
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
  field?: { path: string; value: number };
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
    eta: l.path === 'pipeline.eta' ? l.value : panelEta,
    seed: l.seed,
    field: { path: l.path, value: l.value },
    config: l.overrides,
  }));

/** The race's two η: synchronous, then the panel's (4 when the panel's is 0). */
export const raceEtas = (panelEta: number): number[] => [0, panelEta > 0 ? panelEta : 4];

/** What a leg's run came to, as the comparison reads it once the run has ended. */
export interface LegOutcome {
  runId: string | null;
  loss: RunConfig['learner']['loss'];
  steps: readonly StepReport[];
  /** The run's counters as its dashboard last showed them. */
  counters: PipelineCounters | undefined;
  /** The run ended on an error. */
  error: string | null;
  /** The run's timeline events (its session's), when the runner kept them. */
  events?: readonly TimelineEvent[];
}

/** How a comparison runs its legs (the page's run view; a fake in tests). */
export interface LegRunner {
  /** Runs a leg from fresh weights as `plan` says until `samples` episodes are trained; resolves when it ends. */
  run(plan: LegPlan, samples: number): Promise<LegOutcome>;
  /** Greedy success of the leg just run (its newest version). */
  evaluate(): Promise<{ train: number; heldOut: number | null }>;
  /** The comparison as it stands, after each leg. */
  progress(c: Comparison): void;
}

/** The leg of a run that trained `samples` episodes, timed as the pipeline bench times it (`stepThroughput`). */
export function legOf(plan: LegPlan, samples: number, o: LegOutcome, success: Leg['success']): Leg {
  const { eta, fixedLag = false, seed, field } = plan;
  const t = stepThroughput(o.steps, samples);
  const stale = o.steps.flatMap((st) => st.staleness);
  const mean = (pick: (m: StepReport['metrics']) => number) => {
    const xs = o.steps.map((st) => pick(st.metrics)).filter(Number.isFinite);
    return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN;
  };
  return {
    eta,
    fixedLag,
    loss: o.loss,
    ...(seed !== undefined ? { seed } : {}),
    ...(field ? { field } : {}),
    runId: o.runId,
    samplesPerSec: t.samplesPerSec,
    seconds: t.seconds,
    trainerBusy: t.trainerBusy,
    idealSpeedup: t.idealSpeedup,
    meanStaleness: stale.reduce((a, b) => a + b, 0) / Math.max(1, stale.length),
    interrupts: o.counters?.interrupts ?? 0,
    staleDrops: o.counters?.staleDrops ?? 0,
    success,
    lag: { kl: mean((m) => m.lagKl), clipped: mean((m) => m.clipFrac), masked: mean((m) => m.maskedFrac) },
  };
}

/**
 * Runs a comparison: one run per leg of `plan`, each over the same `samples` from fresh weights
 * (evaluated greedily at its end when `evaluate`). A leg stopped before its samples, or failed,
 * ends the comparison there (marked `stopped`).
 */
export async function compare(
  kind: Comparison['kind'],
  plan: readonly LegPlan[],
  samples: number,
  evaluate: boolean,
  runner: LegRunner,
): Promise<Leg[]> {
  const legs: Leg[] = [];
  runner.progress({ kind, legs: [], plan, samples });
  for (const p of plan) {
    const o = await runner.run(p, samples);
    const trained = o.steps.reduce((n, st) => n + st.episodes, 0);
    if (o.error || trained < samples) {
      runner.progress({ kind, legs: [...legs], plan, samples, stopped: true });
      break;
    }
    const success = evaluate ? await runner.evaluate() : null;
    const leg = legOf(p, samples, o, success);
    legs.push(kind === 'race' ? { ...leg, strip: legStrip(o.events ?? []) } : leg);
    runner.progress({ kind, legs: [...legs], plan, samples });
  }
  return legs;
}

/** What a comparison reads of the page's run view: a leg is a run of its own, started there. */
export interface ComparedView {
  start(opts: { config: RunOverrides; maxTrainedEpisodes: number; evalEvery: number }): Promise<void>;
  evaluateLatest(level: Level | 'all'): Promise<EvalPoint>;
  /** Resolves when every evaluation asked for is done. */
  evaluationsDone(): Promise<void>;
  /** The run's evaluations, oldest first. */
  readonly evals: readonly EvalPoint[];
  readonly runId: string | null;
  readonly settings: Pick<RunConfig, 'learner' | 'task'>;
  readonly steps: readonly StepReport[];
  readonly dashboard: { counters: PipelineCounters } | null;
  readonly error: string | null;
  /** The run's timeline events, as its timeline last showed them. */
  readonly events: readonly TimelineEvent[];
  readonly curriculum: CurriculumView | null;
  comparison: Comparison | null;
}

/**
 * The evaluations at versions ≥ 3/4 of `last` (a leg's last quarter), each version once: the
 * newest of its evaluations (the final one may repeat a periodic one).
 */
export function lastQuarter(evals: readonly EvalPoint[], last: number): EvalPoint[] {
  const byVersion = new Map(evals.map((e) => [e.iteration, e]));
  return [...byVersion.values()].filter((e) => e.iteration >= 0.75 * last);
}

/** Mean greedy success of a leg's last quarter (`lastQuarter`). */
export function lateSuccess(evals: readonly EvalPoint[], last: number): NonNullable<Leg['success']> {
  const late = lastQuarter(evals, last);
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
  const held = late.flatMap((e) => (e.successHeldOut === null ? [] : [e.successHeldOut]));
  return { train: mean(late.map((e) => e.successTrain)), heldOut: held.length ? mean(held) : null };
}

/** The legs of a comparison run in the page's run view, each read as its panels show it once it ended. */
export function viewLegRunner(v: ComparedView): LegRunner {
  let level: Level | undefined;
  let evalEvery = 0;
  return {
    run: async (plan, samples) => {
      const { eta, loss, fixedLag, seed, field } = plan;
      evalEvery = plan.evalEvery ?? 0;
      // An evaluation of an earlier run still in flight must not land among this leg's.
      await v.evaluationsDone();
      // A fixed lag runs synchronously, its workers η versions behind; otherwise η bounds the lag.
      // A field sweep's leg leaves the pipeline to the panel and its field (η may be the field).
      const lag = field ? {} : fixedLag ? { eta: 0, playLag: eta } : { eta, playLag: 0 };
      level = plan.level;
      const config = withinOverrides(plan.config ?? {}, {
        ...(seed !== undefined ? { seed } : {}),
        pipeline: lag,
        ...(loss ? { learner: { loss } } : {}),
        ...(level ? { task: { level } } : {}),
      });
      await v.start({ config, maxTrainedEpisodes: samples, evalEvery });
      const counters = v.dashboard?.counters;
      const { runId, steps, error, events } = v;
      return { runId, loss: loss ?? v.settings.learner.loss, steps, counters, error, events };
    },
    evaluate: async () => {
      const at = level ?? v.settings.task.level ?? (v.curriculum?.enabled ? v.curriculum.level : 'all');
      const e = await v.evaluateLatest(at);
      if (evalEvery === 0) return { train: e.successTrain, heldOut: e.successHeldOut };
      await v.evaluationsDone();
      return lateSuccess(v.evals, e.iteration);
    },
    progress: (c) => (v.comparison = c),
  };
}
