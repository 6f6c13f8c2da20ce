import type { CurriculumView } from '../env/curriculum';
import type { Level } from '../env/suite';
import type { PipelineCounters } from '../pipeline/controller';
import type { TimelineEvent } from '../pipeline/events';
import { stepThroughput } from '../stats/metrics';
import { legStrip } from '../stats/leg-strip';
import { withinOverrides, type RunConfig, type RunOverrides } from '../config/run-config';
import type { EvalPoint, StepReport } from '../pipeline/types';
import type { Comparison, Leg, LegPlan } from './comparison-plans';

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
