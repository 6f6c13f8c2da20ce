import type { RolloutStats } from '../../../workers/rollout.worker';
import type { Pipeline, PipelineCounters } from '../pipeline/controller';
import type { TimelineEvent } from '../pipeline/events';
import type { SlotView } from '../pipeline/slots';
import { adoptionLatencies, percentile, policyLag, type PolicyLag, type StepLag } from '../stats/metrics';
import type { FaultRecord } from '../pipeline/worker-pool';
import type { PipelineSession } from './session';

/** The run's own settings the advisor reads, and the machine's cores. */
export interface AdvisorSetup {
  /** Staleness bound η (Infinity: unbounded). */
  eta: number;
  /** Rollout workers of the run. */
  workers: number;
  /** Logical cores of the machine (`navigator.hardwareConcurrency`). */
  cores: number;
  /** Groups (tasks) per training batch: B. */
  batchGroups: number;
}

/** Figures of the live dashboard beside the timeline. */
export interface Dashboard {
  version: number;
  counters: PipelineCounters;
  /** Trained episodes per second of wall time. */
  samplesPerSec: number;
  generatedPerSec: number;
  trainerBusy: number;
  running: number;
  /** Jobs waiting for a slot: requeued after a failure, preempted, or drawn ahead (`queueAhead`). */
  waiting: number;
  /** Free slots the staleness bound keeps idle now. */
  heldByEta: number;
  /** Every live rollout slot: its state and figures (a stopped run's: all idle, figures kept). */
  slots: SlotView[];
  buffered: number;
  maxConcurrent: number;
  cacheHitRate: number | null;
  /** The sandboxes the rollout workers run programs in (one kind, unless mixed). */
  sandboxes: string[];
  /**
   * Hindsight: programs relabelled this session, distinct relabelled tasks in the pool now, jobs
   * that posed one, and relabelled programs kept out because they compute a held-out or
   * generalisation task (decontamination).
   */
  hindsight: { relabelled: number; distinct: number; posed: number; decontaminated: number };
  /** How far behind the trainer trained groups were: in versions, and in samples (PipelineRL's lag). */
  lag: PolicyLag;
  /** p95 of publish → every worker running the version, ms. */
  adoptP95Ms: number | null;
  /** Bytes of the newest published policy (every parameter, or LoRA adapters only); null before one. */
  policyBytes: number | null;
  faults: readonly FaultRecord[];
  seconds: number;
  /** Epoch ms this session of the run started. */
  startedAt: number;
  /** The site's storage use and quota (navigator.storage.estimate()), bytes; null where unknown. */
  storage: { usage: number; quota: number } | null;
  /** The running run's own settings the bottleneck advisor reads beside these figures. */
  setup: AdvisorSetup;
}

/** What the dashboard reads of a session (a live one, or parts of one in tests). */
export type DashboardSource = Pick<
  PipelineSession,
  'source' | 'lanes' | 'faults' | 'seconds' | 'settings'
> & {
  pipeline: Pick<
    Pipeline,
    | 'version'
    | 'counters'
    | 'startedAt'
    | 'isStopped'
    | 'runningGroups'
    | 'waitingGroups'
    | 'slotsHeldByEta'
    | 'slots'
    | 'buffer'
    | 'maxConcurrent'
    | 'trainerBusyFraction'
  >;
  log: { readonly events: readonly TimelineEvent[] };
};

/** What the dashboard reads beside the session at the moment it is drawn. */
export interface DashboardMoment {
  /** Epoch ms now. */
  now: number;
  /** The rollout workers' last heartbeats (none once the run has stopped). */
  workers: readonly { stats: RolloutStats | null }[];
  /** Cores of the machine (the advisor reads them). */
  cores: number;
  storage: Dashboard['storage'];
  /** The figures drawn last: a stopped run's workers are gone, and their last figures stay. */
  previous: Dashboard | null;
  /** The run's training steps so far, thinned past `LAG_STEPS` × 2 (its lag reads the newest `LAG_STEPS`); none: no lag yet. */
  steps?: readonly StepLag[];
}

/** Cores of this machine (2 where unknown). */
export const machineCores = (): number =>
  typeof navigator === 'undefined' ? 2 : navigator.hardwareConcurrency;

/** Episodes played and trained, from a run's counters. */
export const episodeTotals = (c: Readonly<Record<string, number>>): { played: number; trained: number } => ({
  played: c.generatedEpisodes ?? 0,
  trained: c.trainedEpisodes ?? 0,
});

/** `policyBytes` of the newest publish among `events`, or null. */
export function lastPolicyBytes(events: readonly TimelineEvent[]): number | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e?.kind === 'publish' && typeof e.meta?.policyBytes === 'number') return e.meta.policyBytes;
  }
  return null;
}

/** The dashboard's figures: a pure function of the session's counters and log and the moment's readings. */
/** The lag is the mean over the groups of the newest this many steps (the charts keep them whole). */
export const LAG_STEPS = 1_000;

export function dashboardOf(s: DashboardSource, m: DashboardMoment): Dashboard {
  const p = s.pipeline;
  const seconds = (m.now - p.startedAt) / 1000;
  let hits = 0;
  let total = 0;
  const sandboxes: string[] = [];
  for (const { stats } of m.workers) {
    if (stats?.sandbox && !sandboxes.includes(stats.sandbox)) sandboxes.push(stats.sandbox);
    hits += stats?.cache.hits ?? 0;
    total += (stats?.cache.hits ?? 0) + (stats?.cache.misses ?? 0);
  }
  // Once the run has stopped its workers are gone: their last figures stay on the dashboard.
  const kept = p.isStopped && m.workers.length === 0 ? m.previous : null;
  const lat = adoptionLatencies(s.log.events, s.lanes);
  return {
    version: p.version,
    counters: { ...p.counters, stalenessHistogram: { ...p.counters.stalenessHistogram } },
    samplesPerSec: p.counters.trainedEpisodes / Math.max(1e-3, seconds),
    generatedPerSec: p.counters.generatedEpisodes / Math.max(1e-3, seconds),
    trainerBusy: p.trainerBusyFraction(m.now),
    running: p.runningGroups,
    waiting: p.waitingGroups,
    heldByEta: p.slotsHeldByEta,
    slots: p.slots(m.now),
    buffered: p.buffer.size,
    maxConcurrent: p.maxConcurrent,
    cacheHitRate: kept ? kept.cacheHitRate : total > 0 ? hits / total : null,
    sandboxes: kept ? kept.sandboxes : sandboxes,
    hindsight: {
      relabelled: s.source.hindsight.added,
      distinct: s.source.hindsight.distinct,
      posed: s.source.posed,
      decontaminated: s.source.hindsight.decontaminated,
    },
    lag: policyLag((m.steps ?? []).slice(-LAG_STEPS)),
    adoptP95Ms: lat.length ? percentile(lat, 95) : null,
    policyBytes: lastPolicyBytes(s.log.events),
    faults: s.faults.map((f) => ({ ...f })), // copies: the pool fills in replacedAt later
    seconds: s.seconds,
    startedAt: p.startedAt,
    storage: m.storage,
    setup: {
      eta: s.settings.pipeline.eta,
      workers: s.settings.pipeline.workers,
      cores: m.cores,
      batchGroups: s.settings.learner.tasksPerBatch,
    },
  };
}

/** Reads the site's storage estimate every `every`-th time it is asked (each read costs a round trip). */
export class StorageEstimates {
  private asked = 0;
  constructor(private readonly every = 8) {}

  /** The estimate now, or `previous` between reads (and where the browser gives none). */
  async read(previous: Dashboard['storage']): Promise<Dashboard['storage']> {
    const storage = typeof navigator === 'undefined' ? undefined : navigator.storage;
    if (!storage?.estimate || (this.asked++ % this.every !== 0 && previous)) return previous;
    const e = await storage.estimate().catch(() => null);
    return e ? { usage: e.usage ?? 0, quota: e.quota ?? 0 } : previous;
  }
}
