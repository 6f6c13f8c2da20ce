import type { JSHandle } from 'playwright-core';
import type { TimelineEvent } from '../../src/lib/pipeline/events.ts';
import type { EvalPoint } from '../../src/lib/pipeline/types.ts';
import { lastQuarter, lateSuccess } from '../../src/lib/run/comparisons.ts';
import {
  adoptionLatencies,
  busyCoreMs,
  coreBoundSpeedup,
  percentile,
  policyLag,
  stepThroughput,
  turnSpread,
  type TurnSpread,
} from '../../src/lib/stats/metrics.ts';
import { defaultRunConfig, withTaskKind, type RunOverrides } from '../../src/lib/config/run-config.ts';
import type { TaskKind } from '../../src/lib/env/suite.ts';
import { CpuSampler } from './cpu.ts';
import type { Lab } from '../support/lab.ts';

/** What one run of the pipeline came to. */
export interface PipelineFigures {
  eta: number | null;
  loss: string;
  trainedEpisodes: number;
  steps: number;
  /** Trained episodes per second, end of the first step → the step that reached the sample budget. */
  samplesPerSec: number;
  seconds: number;
  /** Fraction of that time the trainer computed (training + publishing). */
  trainerBusy: number;
  /** Mean of (rollout + train) / max(rollout, train) per step, the first (start-up) step left out. */
  idealSpeedup: number;
  /**
   * The ideal speedup bounded by this machine's cores (`coreBoundSpeedup` in metrics.ts), from
   * the cores kept busy in each phase; null without a CPU sampler (`cpu`).
   */
  coreBoundSpeedup: number | null;
  /** Mean busy cores of the machine in the rollout and the training phases, and overall (with `cpu`). */
  busyCores: { rollout: number; train: number; all: number } | null;
  /**
   * Mean ms per version of the trainer's busy time (as the controller counts it) by part:
   * `toWorker` from the draw to the trainer worker starting on the batch (building it on the
   * main thread, the message), `prep` the trainer's work before the first step (π_prox when it
   * is computed apart), `steps` the optimiser steps, `pack` and `write` the version's packing and
   * IndexedDB write, `back` from the publish to the main thread taking the result, `rest` what is
   * left.
   */
  trainerMs: {
    toWorker: number;
    prep: number;
    steps: number;
    pack: number;
    write: number;
    back: number;
    rest: number;
  };
  adoptP95Ms: number | null;
  interrupts: number;
  staleDrops: number;
  meanStaleness: number;
  /** Mean lag in samples of the trained groups (PipelineRL's: episodes trained since their behaviour version). */
  meanLagSamples: number | null;
  successTrain: number;
  successHeldOut: number | null;
  /**
   * With `evalEvery`: the mean greedy success of the evaluations over the run's last quarter (the
   * final one included), as `staleness-node.ts` reads a run (greedy answers flip between versions).
   */
  late: { successTrain: number; successHeldOut: number | null; evaluations: number } | null;
  /** Turns of the episodes the rollout workers played (every finished group, trained or not). */
  turns: TurnSpread;
  /** Median and 95th percentile of a finished group's rollout time, start to end, ms (null without groups). */
  groupMsP50: number | null;
  groupMsP95: number | null;
}

/**
 * What `runPipeline` takes to train on `kind`'s built-in tasks as a page run would
 * (`withTaskKind`): the setting, and the code config's environment and hindsight.
 */
export function taskKindOverrides(kind: TaskKind): RunOverrides {
  const s = withTaskKind(defaultRunConfig(), kind);
  return { task: { kind }, env: s.env, hindsight: s.hindsight };
}

const round = (v: number, d = 3) => Math.round(v * 10 ** d) / 10 ** d;

const roundSpread = (t: TurnSpread): TurnSpread => ({
  ...t,
  mean: round(t.mean),
  shares: t.shares.map((x) => round(x)),
  meanGroupMax: round(t.meanGroupMax),
});

/**
 * Trains from fresh weights on the easy level until `samples` episodes were trained on, with the
 * given pipeline settings (and code config overrides `run`); evaluates the last version greedily
 * on the easy tasks (of the run's task kind: `taskKindOverrides`). Counts the turns of every
 * episode played. With `cpu`, samples the machine's busy cores meanwhile.
 */
export async function runPipeline(
  lab: JSHandle<Lab>,
  settings: RunOverrides,
  samples: number,
  cpu?: CpuSampler,
  evalEvery = 0,
): Promise<PipelineFigures> {
  cpu?.start();
  const r = await lab.evaluate(
    async (l, a) => {
      const before = l.run.session;
      let ended = false;
      const run = l.run
        .start({
          evalEvery: a.evalEvery,
          maxTrainedEpisodes: a.samples,
          config: { ...a.settings, task: { ...a.settings.task, level: 'easy' } },
        })
        .finally(() => (ended = true));
      // The run's session appears once it has started: follow the groups its controller takes
      // (as the program feed does) for the turns of each episode and each group's rollout time.
      while (!ended && (l.run.session === null || l.run.session === before))
        await new Promise((ok) => setTimeout(ok, 5));
      const session = l.run.session;
      const turns: number[][] = [];
      const groupMs: number[] = [];
      const unsubscribe = session?.onPlayed((_job, group) => {
        if (group.status !== 'done') return;
        turns.push(group.trajectories.map((t) => t.turns));
        groupMs.push(group.endedAt - group.startedAt);
      });
      const maxTurns = session?.settings.env.maxTurns ?? 0;
      await run;
      unsubscribe?.();
      if (l.run.error) return { error: l.run.error };
      const evaluation = await l.run.evaluateLatest('easy');
      await l.run.evaluationsDone();
      return {
        error: null,
        evaluation,
        evals: l.run.evals,
        steps: l.run.steps,
        events: l.run.events,
        dashboard: l.run.dashboard,
        turns,
        groupMs,
        maxTurns,
      };
    },
    { settings, samples, evalEvery },
  );
  cpu?.stop();
  if (r.error !== null || !r.dashboard || !r.steps || !r.events || !r.evaluation || !r.turns || !r.groupMs)
    throw new Error(`pipeline run failed: ${r.error ?? 'no figures'}`);
  const steps = r.steps;
  const c = r.dashboard.counters;
  // Timed from the end of the first step, so that start-up (workers, shader compilation on
  // WebGPU, the first version's publish) is out of both the sync and the async figures.
  const t = stepThroughput(steps, samples);
  const counted = steps.slice(1, 1 + t.counted);
  const from = steps[0] ? t.from : r.dashboard.startedAt;
  const { seconds, trained, busyMs } = t;
  const windows = steps.slice(1).map((s) => {
    const trainFrom = s.at - s.trainMs;
    return { rollout: [trainFrom - s.waitMs, trainFrom] as const, train: [trainFrom, s.at] as const };
  });
  const coreBound = cpu?.cores ? coreBoundSpeedup(windows, cpu.samples, cpu.cores) : NaN;
  const meanBusy = (pick: (w: (typeof windows)[number]) => readonly [number, number]) => {
    let busy = 0;
    let ms = 0;
    for (const w of windows) {
      const [a, b] = pick(w);
      busy += busyCoreMs(cpu?.samples ?? [], a, b);
      ms += b - a;
    }
    return round(busy / Math.max(1, ms), 2);
  };
  const inCounted = (e: TimelineEvent) => e.t1 > from && e.t1 <= (counted.at(-1)?.at ?? from);
  // The event log keeps the newest 10 000 events: means over the versions it still has.
  const publishes = r.events.filter((e) => e.kind === 'publish' && e.lane === 'store' && inCounted(e));
  const published = new Set(publishes.map((e) => e.version));
  const perVersion = (xs: number[]) =>
    round(xs.reduce((a, b) => a + b, 0) / Math.max(1, publishes.length), 1);
  const trainSteps = r.events.filter((e) => e.kind === 'train-step' && published.has(e.version + 1));
  // The trainer worker starts on version v's batch at its first step's t0 − prepMs.
  const workerStart = new Map(
    trainSteps
      .filter((e) => e.meta?.prepMs !== undefined)
      .map((e) => [e.version + 1, e.t0 - Number(e.meta?.prepMs)]),
  );
  const publishEnd = new Map(publishes.map((e) => [e.version, e.t1]));
  const timed = counted.filter((s) => workerStart.has(s.version) && publishEnd.has(s.version));
  const perStep = (f: (s: (typeof timed)[number]) => number) =>
    round(timed.reduce((a, s) => a + f(s), 0) / Math.max(1, timed.length), 1);
  const trainerMs = {
    toWorker: perStep((s) => (workerStart.get(s.version) ?? 0) - (s.at - s.trainMs)),
    prep: perVersion(trainSteps.map((e) => Number(e.meta?.prepMs ?? 0))),
    steps: perVersion(trainSteps.map((e) => e.t1 - e.t0)),
    pack: perVersion(publishes.map((e) => Number(e.meta?.packMs ?? 0))),
    write: perVersion(publishes.map((e) => Number(e.meta?.writeMs ?? 0))),
    back: perStep((s) => s.at - (publishEnd.get(s.version) ?? 0)),
    rest: 0,
  };
  const { rest: _, ...parts } = trainerMs;
  trainerMs.rest = round(
    busyMs / Math.max(1, counted.length) - Object.values(parts).reduce((a, b) => a + b, 0),
    1,
  );
  const lanes = [...new Set(r.events.map((e) => e.lane).filter((l) => l.startsWith('rollout')))];
  const lat = adoptionLatencies(r.events, lanes);
  const stale = steps.flatMap((s) => s.staleness);
  const lagSamples = policyLag(steps).meanSamples;
  const eta = settings.pipeline?.eta;
  return {
    eta: eta !== undefined && Number.isFinite(eta) ? eta : null,
    loss: String(settings.learner?.loss ?? 'decoupled'),
    trainedEpisodes: trained,
    steps: steps.length,
    samplesPerSec: round(t.samplesPerSec),
    seconds: round(seconds, 1),
    trainerBusy: round(t.trainerBusy),
    idealSpeedup: round(t.idealSpeedup),
    coreBoundSpeedup: Number.isFinite(coreBound) ? round(coreBound) : null,
    busyCores: cpu?.cores
      ? {
          rollout: meanBusy((w) => w.rollout),
          train: meanBusy((w) => w.train),
          all: round(busyCoreMs(cpu.samples, from, from + seconds * 1000) / Math.max(1, seconds * 1000), 2),
        }
      : null,
    trainerMs,
    adoptP95Ms: lat.length ? round(percentile(lat, 95), 1) : null,
    interrupts: c.interrupts,
    staleDrops: c.staleDrops,
    meanStaleness: round(stale.reduce((a, b) => a + b, 0) / Math.max(1, stale.length)),
    meanLagSamples: lagSamples === null ? null : round(lagSamples, 1),
    successTrain: round(r.evaluation.successTrain),
    successHeldOut: r.evaluation.successHeldOut === null ? null : round(r.evaluation.successHeldOut),
    late: evalEvery > 0 ? lateFigures(r.evals ?? [], r.evaluation.iteration) : null,
    turns: roundSpread(turnSpread(r.turns, r.maxTurns ?? 0)),
    groupMsP50: r.groupMs.length ? round(percentile(r.groupMs, 50), 1) : null,
    groupMsP95: r.groupMs.length ? round(percentile(r.groupMs, 95), 1) : null,
  };
}

/** The run's last quarter, as a sweep leg reads it (`lateSuccess`), rounded, with its count. */
function lateFigures(evals: readonly EvalPoint[], last: number): NonNullable<PipelineFigures['late']> {
  const { train, heldOut } = lateSuccess(evals, last);
  return {
    successTrain: round(train),
    successHeldOut: heldOut === null ? null : round(heldOut),
    evaluations: lastQuarter(evals, last).length,
  };
}
