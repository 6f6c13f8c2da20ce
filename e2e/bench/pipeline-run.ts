import type { JSHandle } from 'playwright-core';
import type { TimelineEvent } from '../../src/lib/pipeline/events.ts';
import { adoptionLatencies, percentile } from '../../src/lib/pipeline/metrics.ts';

/** The part of the page's `?debug` state a pipeline run in the bench uses (src/lib/ui/run-state.svelte.ts). */
export interface PipelineLab {
  run: {
    error: string | null;
    steps: {
      version: number;
      episodes: number;
      waitMs: number;
      trainMs: number;
      at: number;
      staleness: number[];
    }[];
    events: TimelineEvent[];
    dashboard: {
      startedAt: number;
      counters: {
        trainedEpisodes: number;
        generatedEpisodes: number;
        trainerBusyMs: number;
        interrupts: number;
        staleDrops: number;
        preemptions: number;
      };
    } | null;
    start(opts: Record<string, unknown>): Promise<void>;
    evaluateLatest(level: string): Promise<{ successTrain: number; successHeldOut: number | null }>;
  };
}

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
  adoptP95Ms: number | null;
  interrupts: number;
  staleDrops: number;
  meanStaleness: number;
  successTrain: number;
  successHeldOut: number | null;
}

const round = (v: number, d = 3) => Math.round(v * 10 ** d) / 10 ** d;

/**
 * Trains from fresh weights on the easy level until `samples` episodes were trained on, with the
 * given pipeline settings; evaluates the last version greedily on the easy tasks.
 */
export async function runPipeline(
  lab: JSHandle<PipelineLab>,
  settings: Record<string, unknown>,
  samples: number,
): Promise<PipelineFigures> {
  const r = await lab.evaluate(
    async (l, a) => {
      await l.run.start({ level: 'easy', evalEvery: 0, maxTrainedEpisodes: a.samples, settings: a.settings });
      if (l.run.error) return { error: l.run.error };
      const evaluation = await l.run.evaluateLatest('easy');
      return {
        error: null,
        evaluation,
        steps: l.run.steps,
        events: l.run.events,
        dashboard: l.run.dashboard,
      };
    },
    { settings, samples },
  );
  if (r.error !== null || !r.dashboard || !r.steps || !r.events || !r.evaluation)
    throw new Error(`pipeline run failed: ${r.error ?? 'no figures'}`);
  const steps = r.steps;
  const c = r.dashboard.counters;
  // The steps up to the one that reached the sample budget (the run may have finished one more).
  let upTo = steps.length;
  for (let i = 0, n = 0; i < steps.length; i++) {
    n += steps[i]?.episodes ?? 0;
    if (n >= samples) {
      upTo = i + 1;
      break;
    }
  }
  // Timed from the end of the first step, so that start-up (workers, shader compilation on
  // WebGPU, the first version's publish) is out of both the sync and the async figures.
  const counted = steps.slice(1, upTo);
  const from = steps[0]?.at ?? r.dashboard.startedAt;
  const seconds = ((counted.at(-1)?.at ?? from) - from) / 1000;
  const trained = counted.reduce((n, s) => n + s.episodes, 0);
  const busyMs = counted.reduce((n, s) => n + s.trainMs, 0);
  const phases = steps
    .slice(1)
    .map((s) => (s.waitMs + s.trainMs) / Math.max(1, Math.max(s.waitMs, s.trainMs)));
  const lanes = [...new Set(r.events.map((e) => e.lane).filter((l) => l.startsWith('rollout')))];
  const lat = adoptionLatencies(r.events, lanes);
  const stale = steps.flatMap((s) => s.staleness);
  const eta = settings.eta as number;
  return {
    eta: Number.isFinite(eta) ? eta : null,
    loss: String(settings.loss ?? 'decoupled'),
    trainedEpisodes: trained,
    steps: steps.length,
    samplesPerSec: round(trained / Math.max(1e-3, seconds)),
    seconds: round(seconds, 1),
    trainerBusy: round(busyMs / Math.max(1, seconds * 1000)),
    idealSpeedup: round(phases.reduce((a, b) => a + b, 0) / Math.max(1, phases.length)),
    adoptP95Ms: lat.length ? round(percentile(lat, 95), 1) : null,
    interrupts: c.interrupts,
    staleDrops: c.staleDrops,
    meanStaleness: round(stale.reduce((a, b) => a + b, 0) / Math.max(1, stale.length)),
    successTrain: round(r.evaluation.successTrain),
    successHeldOut: r.evaluation.successHeldOut === null ? null : round(r.evaluation.successHeldOut),
  };
}
