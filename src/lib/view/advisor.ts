/**
 * The bottleneck advisor (DESIGN §6): reads the pipeline's figures and says which side bounds the
 * run — the trainer or the rollouts — and what to change. Pure: the page feeds it the dashboard.
 */
import type { AdvisorSetup } from '../run/dashboard';

/** The figures the advisor reads (the live dashboard's, and the run's settings). */
export interface AdvisorInput extends AdvisorSetup {
  /** Fraction of wall time the trainer computed, 0–1. */
  trainerBusy: number;
  /** Groups playing now, those waiting for a slot, and the slots there are. */
  running: number;
  waiting: number;
  maxConcurrent: number;
  /** Free slots the staleness bound keeps idle now. */
  heldByEta: number;
  /** Finished groups waiting in the replay buffer for the trainer. */
  buffered: number;
  generatedEpisodes: number;
  staleDroppedEpisodes: number;
  /** Groups pushed out of a full replay buffer untrained (unbounded η). */
  replayOverflow: number;
  trainSteps: number;
  /** Share of sandbox runs answered by the result cache, or null before any. */
  cacheHitRate: number | null;
  /** The trainer's tfjs backend (`webgpu`, `wasm`, …), or null while unknown. */
  trainerBackend: string | null;
}

/** The dashboard's figures the advisor reads (the page's `Dashboard` has them all). */
export interface AdvisorFigures {
  setup: AdvisorSetup;
  trainerBusy: number;
  running: number;
  waiting: number;
  maxConcurrent: number;
  heldByEta: number;
  buffered: number;
  cacheHitRate: number | null;
  counters: Pick<
    AdvisorInput,
    'generatedEpisodes' | 'staleDroppedEpisodes' | 'replayOverflow' | 'trainSteps'
  >;
}

/** The advisor's input from the dashboard's figures and the trainer's backend. */
export function advisorInput(d: AdvisorFigures, trainerBackend: string | null): AdvisorInput {
  const { generatedEpisodes, staleDroppedEpisodes, replayOverflow, trainSteps } = d.counters;
  return {
    ...d.setup,
    trainerBusy: d.trainerBusy,
    running: d.running,
    waiting: d.waiting,
    maxConcurrent: d.maxConcurrent,
    heldByEta: d.heldByEta,
    buffered: d.buffered,
    generatedEpisodes,
    staleDroppedEpisodes,
    replayOverflow,
    trainSteps,
    cacheHitRate: d.cacheHitRate,
    trainerBackend,
  };
}

/** What bounds the run. */
export type Bound = 'warming up' | 'train-bound' | 'rollout-bound' | 'balanced';

export interface Advice {
  bound: Bound;
  /** Why, in one sentence with the figures it rests on. */
  reason: string;
  /** What to change (or what would not help), most useful first; empty when nothing stands out. */
  tips: string[];
}

/** Training steps before the figures say anything (start-up: workers load, caches warm). */
export const WARM_UP_STEPS = 5;
/** Trainer busy at or above this: the trainer is the bottleneck. */
export const TRAIN_BOUND_BUSY = 0.9;
/** Trainer busy below this, with no batch waiting for it: the rollouts are. */
export const ROLLOUT_BOUND_BUSY = 0.6;

const pct = (x: number) => `${Math.round(x * 100)} %`;

/** The advisor's verdict on `m`. */
export function advise(m: AdvisorInput): Advice {
  if (m.trainSteps < WARM_UP_STEPS)
    return {
      bound: 'warming up',
      reason: `${m.trainSteps} of ${WARM_UP_STEPS} training steps so far: too early to tell.`,
      tips: [],
    };
  const tips: string[] = [];
  const busy = m.trainerBusy;
  const batchWaiting = m.buffered >= m.batchGroups;
  let bound: Bound;
  let reason: string;
  // The trainer and the rollout workers share the machine's cores: past one worker per core left
  // beside the trainer's, they take turns on them.
  const crowded = m.workers + 1 > m.cores;
  if (busy >= TRAIN_BOUND_BUSY) {
    bound = 'train-bound';
    reason = `the trainer computes ${pct(busy)} of the time${batchWaiting ? `, and ${m.buffered} finished groups wait for it` : ''}.`;
    tips.push('more rollout workers will not make it faster: the trainer sets the pace.');
    if (crowded)
      tips.push(
        `${m.workers} rollout workers and the trainer share ${m.cores} cores: fewer workers leave the trainer a core of its own.`,
      );
    if (m.trainerBackend !== 'webgpu')
      tips.push(
        `the trainer runs on ${m.trainerBackend ?? 'the CPU'}: a GPU (WebGPU on real hardware) is what speeds up the step itself.`,
      );
  } else if (busy < ROLLOUT_BOUND_BUSY && !batchWaiting) {
    bound = 'rollout-bound';
    reason = `the trainer waits for episodes ${pct(1 - busy)} of the time (${m.buffered} of ${m.batchGroups} groups of a batch ready).`;
    // Slots the bound keeps idle would stay idle with a worker more too; at η = 0 that is the design.
    const etaHolds = m.heldByEta > 0;
    if (m.eta === 0)
      tips.push('η = 0 is synchronous: the trainer waits for every batch by design; η ≥ 1 overlaps the two.');
    else if (etaHolds)
      tips.push(
        `the staleness bound (η = ${m.eta}) keeps ${m.heldByEta} free slot${m.heldByEta === 1 ? '' : 's'} idle: a larger η lets rollouts run further ahead of the trainer.`,
      );
    if (etaHolds) {
      /* a worker more would only add idle slots */
    } else if (!crowded && m.workers < 8)
      tips.push('a rollout worker more would play more episodes at once.');
    else if (crowded)
      tips.push(`every core is busy (${m.workers} workers and the trainer on ${m.cores} cores).`);
  } else {
    bound = 'balanced';
    reason = `the trainer computes ${pct(busy)} of the time: neither side holds the other back much.`;
    if (m.eta === 0)
      tips.push(
        `η = 0 is synchronous: the trainer waits while every batch is played (the other ${pct(1 - busy)} of the time); η ≥ 1 overlaps the two.`,
      );
  }
  const dropped = m.generatedEpisodes > 0 ? m.staleDroppedEpisodes / m.generatedEpisodes : 0;
  if (dropped > 0.1)
    tips.push(`${pct(dropped)} of generated episodes were dropped as stale: a larger η keeps them.`);
  if (m.replayOverflow > 0)
    tips.push(
      `${m.replayOverflow} groups overflowed the replay buffer untrained: with η unbounded the rollouts outrun the trainer; bound η.`,
    );
  if (m.cacheHitRate !== null && m.cacheHitRate >= 0.8)
    tips.push(
      `${pct(m.cacheHitRate)} of sandbox runs are cache hits: the policy mostly writes programs it has tried before (its entropy is low); the sandbox costs little.`,
    );
  return { bound, reason, tips };
}
