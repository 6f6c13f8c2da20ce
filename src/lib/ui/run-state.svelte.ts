import { errorMessage } from '../errors';
import { RolloutBridge } from '../bridge/rollout-bridge';
import type { CurriculumView } from '../env/curriculum';
import { agentFigures } from '../env/evaluate';
import { generateTasks } from '../env/families';
import type { Level, TaskSuite } from '../env/suite';
import { DEFAULT_MODEL_ARGS } from '../policy/config';
import type { StepMetrics } from '../policy/metrics';
import type { CodeRunConfig } from '../pipeline/code-workload';
import type { PipelineCounters } from '../pipeline/controller';
import { now, type TimelineEvent } from '../pipeline/events';
import type { AdvisorSetup } from '../pipeline/advisor';
import { settingsFromShare, shareUrl } from '../pipeline/share';
import { adoptionLatencies, percentile, stepThroughput } from '../pipeline/metrics';
import {
  defaultSettings,
  policyReset,
  settingsFromJson,
  validateSettings,
  type RunSettings,
} from '../pipeline/run-settings';
import type { EvalPoint, StepReport } from '../pipeline/types';
import type { FaultRecord } from '../pipeline/worker-pool';
import { LabDbConnection, type LabDB, type RunRecord } from '../storage/db';
import { countTrajectories, lastKeys, listSeqs, listUnconsumed } from '../storage/trajectories-store';
import { HistoryWriter, loadHistory, POOL_EVERY, type RunHistory } from '../storage/history-store';
import { evictionNotice } from '../storage/quota';
import {
  deleteRun,
  getVersion,
  latestVersion,
  listRuns,
  loraBaseOf,
  runKind,
} from '../storage/weights-store';
import { replayFromRecords, resumeKeys } from '../pipeline/resume';
import { CoalescingQueue } from '../pipeline/coalescing-queue';
import { runEvaluationTasks } from '../pipeline/run-tasks';
import { jobSourceOf, newRunId, runInit, type Restored } from '../run/pipeline';
import { PipelineSession } from '../run/session';
import { count } from './plural';
import { CrashSafeWorker } from '../run/crash-safe-worker';
import { settlesWithin } from '../run/failure-signal';
import { StartUp } from '../run/start-up';
import { TabLocks } from './tab-locks';
import { BUILT_IN_SEED } from './tasks-state.svelte';
import type { TrainerState } from './trainer-state.svelte';

export type { EvalPoint };

/** A greedy evaluation asked for during a run (`evaluateNow`). */
interface EvalRequest {
  runId: string;
  /** The run's suite when asked. */
  settings: Pick<RunSettings, 'tasks'>;
  level: Level | 'all';
  /** The version to score (the newest stored when undefined or pruned meanwhile). */
  version: number | undefined;
}

/** Options of one run (the bench and the tests set them; the page uses the settings panel). */
export interface RunOptions {
  /** Stop after this many published versions (training steps). */
  maxIterations?: number;
  /** Stop once this many episodes have been trained on (the pipeline bench's equal samples). */
  maxTrainedEpisodes?: number;
  /** Train on this level only (the learn bench trains on easy). */
  level?: Level;
  /** Evaluate greedily on the level's training and held-out tasks every this many versions (0: never). */
  evalEvery?: number;
  /** Overrides of the run's code-env defaults (the bench compares estimators this way). */
  run?: Partial<CodeRunConfig>;
  /** Adam learning rate for this run; the run's default otherwise. */
  learningRate?: number;
  /** Overrides of the pipeline settings (η, workers, loss, replay, …). */
  settings?: Partial<RunSettings>;
}

/** A stored run, as the run list shows it. */
export interface RunListEntry {
  id: string;
  status: RunRecord['status'];
  latestVersion: number;
  updatedAt: number;
  trajectories: number;
  unconsumed: number;
  /** What the run trains: `every parameter`, or `LoRA, rank r`. */
  trains: string;
  /** How: `η = 4, decoupled PPO` (tells apart the legs of a race or a sweep). */
  how: string;
  /** Another tab of the page trains it now (it holds the run's lock): no Resume, no Delete here. */
  elsewhere: boolean;
  /**
   * It can go on from its newest version: it was running when the page closed, was paused, or
   * failed (a full quota, a crash: what it stored is intact), and no tab trains it now.
   */
  resumable: boolean;
}

/** The Web Lock a tab holds while it trains a code run (other tabs see it held). */
export const runLock = (runId: string): string => `sandbox-rl-lab/code-run/${runId}`;

/**
 * Whether a stored run can go on from its newest version: it has one; it was running when its
 * page closed, was paused, or failed (what it stored is intact: a full quota, a crash); and
 * neither another tab (`elsewhere`) nor this page (`running`: the id of the run it trains) trains it.
 */
export function resumable(
  r: Pick<RunRecord, 'id' | 'status' | 'latestVersion'>,
  elsewhere: boolean,
  running: string | null,
): boolean {
  const stopped = r.status === 'running' || r.status === 'paused' || r.status === 'failed';
  return r.latestVersion >= 0 && stopped && !elsewhere && r.id !== running;
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
  /** Jobs requeued after a failure, waiting for a slot. */
  waiting: number;
  /** Free slots the staleness bound keeps idle now. */
  heldByEta: number;
  buffered: number;
  maxConcurrent: number;
  cacheHitRate: number | null;
  /** The sandboxes the rollout workers run programs in (one kind, unless mixed). */
  sandboxes: string[];
  /** Hindsight: programs relabelled this session, distinct relabelled tasks in the pool now, jobs that posed one. */
  hindsight: { relabelled: number; distinct: number; posed: number };
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

/**
 * One leg of a comparison (the sync-vs-async race, the staleness sweep): a run from fresh weights
 * over the same number of trained samples as the other legs.
 */
export interface Leg {
  eta: number;
  loss: RunSettings['loss'];
  runId: string | null;
  samplesPerSec: number;
  seconds: number;
  trainerBusy: number;
  /** (rollout + train) / max(rollout, train) per step: what overlapping the two could gain. */
  idealSpeedup: number;
  /** Mean staleness of the trained samples, versions. */
  meanStaleness: number;
  interrupts: number;
  staleDrops: number;
  /** Greedy success of the leg's last version (the sweep evaluates; the race does not). */
  success: { train: number; heldOut: number | null } | null;
}

/** A comparison in the run panel: its kind, the legs done, how many it has. */
export interface Comparison {
  kind: 'race' | 'sweep';
  legs: Leg[];
  planned: number;
  /** A leg ended before its episodes (a Stop, an error): the legs after it did not run. */
  stopped?: boolean;
}

/**
 * How long a Stop waits for a run's start-up to end by itself before giving it up, ms. A start-up
 * here takes a few seconds (its rollout workers' backends and sandboxes); one that does not end
 * within this waits on something that does not answer (a hung trainer, a blocked storage open).
 */
export const STOP_STARTUP_MS = 20_000;
/** How long the end of a run waits for the run list to be read again, ms. */
const REFRESH_WAIT_MS = 5_000;
/** How long a run that ends after a failed start-up waits for the trainer it starts again, ms. */
const RESTART_WAIT_MS = 30_000;
/** What a start-up step waits on, as a Stop that gives it up names it. */
const TRAINER = 'the trainer';
const STORAGE = 'the storage';

/** Episodes each leg of the race trains on (about 40 versions). */
export const RACE_SAMPLES = 640;
/** Episodes each leg of the staleness sweep trains on (about 20 versions), and its η values. */
export const SWEEP_SAMPLES = 320;
export const SWEEP_ETAS: readonly number[] = [0, 1, 2, 4, 8, Infinity];

/** How the run panel names what a run trains. */
export function loraLabel(lora: RunSettings['lora']): string {
  return lora ? `LoRA, rank ${lora.rank}` : 'every parameter';
}

/** What a stored run trains, and on which tasks when they are a suite of the user's. */
export function trainsLabel(
  s: Pick<RunSettings, 'lora' | 'tasks'> & Partial<Pick<RunSettings, 'startFrom'>>,
): string {
  const what = loraLabel(s.lora);
  const from = s.startFrom ? `, from ${s.startFrom.runId} version ${s.startFrom.version}` : '';
  return `${what}${s.tasks ? `, on "${s.tasks.name}" (${count(s.tasks.tasks.length, 'task')})` : ''}${from}`;
}

/** `η = 4, decoupled PPO`: what tells runs apart in the lists (the legs of a race or a sweep). */
export function howLabel(
  s: Pick<RunSettings, 'eta' | 'loss'> & { code?: Pick<RunSettings['code'], 'updatesPerBatch'> },
): string {
  const updates = s.code?.updatesPerBatch ?? 1;
  return `η = ${Number.isFinite(s.eta) ? s.eta : '∞'}, ${s.loss === 'ppo' ? 'PPO clip' : 'decoupled PPO'}${updates > 1 ? `, ${updates} updates / batch` : ''}`;
}

/** `policyBytes` of the newest publish among `events`, or null. */
function lastPolicyBytes(events: readonly TimelineEvent[]): number | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e?.kind === 'publish' && typeof e.meta?.policyBytes === 'number') return e.meta.policyBytes;
  }
  return null;
}

/** Episodes played and trained, from a run's counters. */
const totalsOf = (c: Record<string, number>) => ({
  played: c.generatedEpisodes ?? 0,
  trained: c.trainedEpisodes ?? 0,
});

/**
 * UI state of a training run of the code-writing policy: the asynchronous pipeline (η = 0 is the
 * synchronous case) with its rollout worker pool, timeline, run list and resume.
 */
export class RunState {
  running = $state(false);
  /** A Stop is in progress: the step in progress publishes first, or the start-up finishes. */
  stopping = $state(false);
  /** The run ends because it reached the versions or episodes it was asked for, not by a Stop. */
  finishing = $state(false);
  error = $state<string | null>(null);
  /** Things the user should know that did not stop the run (evictions, restarts). */
  notices = $state.raw<string[]>([]);

  /** Adds a notice (the newest five stay); the same text again moves to the end rather than repeat. */
  notify(message: string): void {
    this.notices = [...this.notices.filter((n) => n !== message).slice(-4), message];
  }
  settings = $state<RunSettings>(
    defaultSettings(typeof navigator === 'undefined' ? 2 : navigator.hardwareConcurrency),
  );
  runId = $state<string | null>(null);
  /** The last share link made of the settings (`makeShareLink`), or null. */
  shareLink = $state<string | null>(null);
  /** Whether the browser let the share link be copied to the clipboard. */
  shareLinkCopied = $state(false);
  steps = $state.raw<StepReport[]>([]);
  metrics = $state.raw<StepMetrics | null>(null);
  curriculum = $state.raw<CurriculumView | null>(null);
  evals = $state.raw<EvalPoint[]>([]);
  /** The last sync-vs-async race or staleness sweep (its finished legs), and whether one is on. */
  comparison = $state.raw<Comparison | null>(null);
  comparing = $state(false);
  events = $state.raw<readonly TimelineEvent[]>([]);
  dashboard = $state.raw<Dashboard | null>(null);
  runs = $state.raw<RunListEntry[]>([]);
  rolloutBackend = $state<string | null>(null);
  /** The stored run whose history the panels show while nothing runs (`view`), or null. */
  viewing = $state<string | null>(null);
  /** Episodes the run shown played and trained over all its sessions (a resumed one's included), or null. */
  episodeTotals = $state<{ played: number; trained: number } | null>(null);
  /** Tasks in the shown run's own suite (null: the built-in suite), for what its evaluations score. */
  get suiteTasks(): number | null {
    return this.runSettings.tasks?.tasks.length ?? null;
  }

  /** The live session (null between runs). */
  session: PipelineSession | null = null;
  /** The page's connection: a tab of a newer page closes it, and an older tab can hold it up. */
  private readonly db = new LabDbConnection({
    blocked: () =>
      this.notify('Storage is waiting for another tab of this page, an older version, to close.'),
    closed: (message) => {
      // A run cannot go on without its storage: it stops, and this message stays (the errors of
      // writes on the closed connection that follow would hide it).
      this.storageGone = message;
      this.error = message;
      void this.end('failed');
    },
  });
  /** Why the storage went away under this page (another tab upgraded or deleted it). */
  private storageGone: string | null = null;
  /**
   * Greedy evaluations, one at a time: a periodic one asked for while another waits replaces it
   * (evaluations slower than the run's versions never caught up otherwise).
   */
  private readonly evaluations = new CoalescingQueue<EvalRequest>(
    (r) => this.evaluateRequested(r),
    (err) => this.notify(`evaluation failed: ${errorMessage(err)}`),
  );
  private ending = false;
  /**
   * While a run starts: its start-up, and what resolves when that run ends (a Stop meanwhile
   * waits for it, up to `STOP_STARTUP_MS`).
   */
  private starting: { startup: StartUp; done: Promise<void> } | null = null;
  /** How a Stop or a failure during the start-up asked the run to end, applied once it is built. */
  private endRequested: 'paused' | 'failed' | null = null;
  /** Ticks since the storage estimate was last read (it is read every 2 s). */
  private estimates = 0;
  /** The greedy evaluations' worker (its own, so the rollout workers keep playing). */
  private readonly evaluator = new CrashSafeWorker(
    (onCrash) => new RolloutBridge('evaluator', onCrash),
    (w) => w.api.init({ model: DEFAULT_MODEL_ARGS, seed: 1 }),
    (m) => this.notify(`the evaluation worker crashed: ${m}`),
  );
  private ticker: ReturnType<typeof setInterval> | undefined;
  private finished: (() => void) | null = null;
  private opts: RunOptions = {};
  /** Writes the current run's history; kept after it stops (a late evaluation is stored too). */
  private history: HistoryWriter | null = null;
  /** The version the current session started from: `maxIterations` and `evalEvery` count from it. */
  private firstVersion = 0;
  /** A chosen saved suite is copied again when it is edited (`syncSavedSuites`). */
  private tasksFollowSaved = false;
  /** What the current (or last) run trains on, for its evaluations. */
  private runSettings = $state.raw<Pick<RunSettings, 'tasks'>>({ tasks: null });
  private t0 = 0;
  /** Reads of the run list started so far (`refreshRuns` keeps only the newest one's). */
  private runsRead = 0;
  /** The run this page trains holds its lock: another tab can neither resume nor delete it. */
  private readonly locks = new TabLocks('sandbox-rl-lab:run-locks');

  constructor(private readonly trainer: TrainerState) {
    // Another tab started, stopped or deleted a run: this tab's list says so without a reload.
    this.locks.onElsewhereChange(() => void this.refreshRuns().catch(() => undefined));
  }

  private database(): Promise<LabDB> {
    return this.db.get();
  }

  /** Reads the stored runs for the run list. */
  async refreshRuns(): Promise<void> {
    // Reads overlap (every 5 versions, at the end of a run): only the newest one's list is kept,
    // so a slow earlier read cannot put back an older version after a later one.
    const seq = ++this.runsRead;
    const db = await this.database();
    const runs = await listRuns(db, 'code');
    const locked = await this.locks.heldElsewhere();
    const listed = await Promise.all(
      runs.map(async (r) => {
        const c = await countTrajectories(db, r.id);
        const settings = settingsFromJson(r.config);
        const elsewhere = locked.includes(runLock(r.id));
        return {
          id: r.id,
          status: r.status,
          latestVersion: r.latestVersion,
          updatedAt: r.updatedAt,
          trajectories: c.total,
          unconsumed: c.total - c.consumed,
          trains: trainsLabel(settings),
          how: howLabel(settings),
          elsewhere,
          resumable: resumable(r, elsewhere, this.running ? this.runId : null),
        };
      }),
    );
    if (seq === this.runsRead) this.runs = listed;
  }

  /** Starts a new run; resolves when it ends (stopped, finished, or failed). */
  start(opts: RunOptions = {}): Promise<void> {
    return this.begin(opts, null);
  }

  /**
   * The sync-vs-async race (DESIGN §9): the same `samples` from fresh weights at η = 0, then at
   * the panel's η (4 when it is 0), each a run of its own, timed as the pipeline bench times them
   * (`stepThroughput`). A leg stopped before its samples ends the race.
   */
  race(samples = RACE_SAMPLES): Promise<Leg[]> {
    const asyncEta = this.settings.eta > 0 ? this.settings.eta : 4;
    return this.compare('race', [0, asyncEta], samples, false);
  }

  /**
   * The staleness sweep (DESIGN §9, AReaL's staleness table): the same `samples` from fresh
   * weights at each η of `etas` with the panel's loss, each a run of its own: throughput, mean
   * staleness, interrupts, stale drops and the greedy success of its last version.
   */
  sweep(samples = SWEEP_SAMPLES, etas: readonly number[] = SWEEP_ETAS): Promise<Leg[]> {
    return this.compare('sweep', etas, samples, true);
  }

  private async compare(
    kind: Comparison['kind'],
    etas: readonly number[],
    samples: number,
    evaluate: boolean,
  ): Promise<Leg[]> {
    if (this.running || this.comparing) return this.comparison?.legs ?? [];
    this.comparing = true;
    this.comparison = { kind, legs: [], planned: etas.length };
    const legs: Leg[] = [];
    try {
      for (const eta of etas) {
        await this.start({ settings: { eta }, maxTrainedEpisodes: samples, evalEvery: 0 });
        const trained = this.steps.reduce((n, st) => n + st.episodes, 0);
        if (this.error || trained < samples) {
          this.comparison = { kind, legs: [...legs], planned: etas.length, stopped: true };
          break;
        }
        const t = stepThroughput(this.steps, samples);
        const stale = this.steps.flatMap((st) => st.staleness);
        const counters = this.dashboard?.counters;
        let success: Leg['success'] = null;
        if (evaluate) {
          const e = await this.evaluateLatest(this.curriculum?.enabled ? this.curriculum.level : 'all');
          success = { train: e.successTrain, heldOut: e.successHeldOut };
        }
        const leg: Leg = {
          eta,
          loss: this.settings.loss,
          runId: this.runId,
          samplesPerSec: t.samplesPerSec,
          seconds: t.seconds,
          trainerBusy: t.trainerBusy,
          idealSpeedup: t.idealSpeedup,
          meanStaleness: stale.reduce((a, b) => a + b, 0) / Math.max(1, stale.length),
          interrupts: counters?.interrupts ?? 0,
          staleDrops: counters?.staleDrops ?? 0,
          success,
        };
        legs.push(leg);
        this.comparison = { kind, legs: [...legs], planned: etas.length };
      }
    } finally {
      this.comparing = false;
    }
    return legs;
  }

  /** Resumes a stored run from its newest version; resolves when it ends. */
  resume(runId: string, opts: RunOptions = {}): Promise<void> {
    return this.begin(opts, runId);
  }

  private async begin(opts: RunOptions, resumeId: string | null): Promise<void> {
    if (this.running) return;
    if (!this.trainer.lease.acquire('run')) {
      this.error = `the trainer is ${this.trainer.status}; wait until it is ready`;
      return;
    }
    this.running = true;
    this.finishing = false;
    this.error = null;
    this.storageGone = null; // a new run opens the storage again: its own errors are its own
    this.notices = [];
    this.viewing = null;
    this.steps = [];
    this.evals = [];
    this.events = [];
    this.metrics = null;
    this.episodeTotals = null;
    this.opts = opts;
    this.t0 = performance.now();
    const done = new Promise<void>((resolve) => (this.finished = resolve));
    // A dead trainer never answers: a crash during the start-up gives it up (and what it would
    // build next is not built). Once the session exists, it restarts the trainer from the store
    // too; the stop below then waits for that restart.
    const startup = new StartUp();
    let crashed = false;
    const offCrash = this.trainer.onCrash((m) => {
      crashed = true;
      startup.abandon(new Error(`the trainer worker crashed while the run started: ${m}`));
    });
    this.starting = { startup, done };
    let failed = false;
    try {
      await startup.run((su) => this.startUp(opts, resumeId, done, su));
    } catch (err) {
      this.error = errorMessage(err);
      failed = true;
    } finally {
      offCrash();
      this.starting = null;
    }
    // A Stop (or a failure) during the start-up waited for it: it stops what the start-up built.
    const requested = this.endRequested;
    this.endRequested = null;
    if (failed || requested) {
      // A crashed trainer, or one the given-up start-up was waiting on (it may hang): the page gets
      // a working one (a built session restarts its own trainer when it stops). The run ends once
      // the new trainer is up, or after RESTART_WAIT_MS whatever it does (it goes on starting).
      if ((crashed || startup.gaveUpWaitingOn === TRAINER) && !this.session)
        await settlesWithin(this.trainer.restart(), RESTART_WAIT_MS);
      await this.end(requested ?? 'failed'); // a Stop's own status, even where the start-up was given up
    }
    return done;
  }

  /**
   * What `begin` does until the run trains: prepare the trainer, build the session, start it.
   * Every await is a `su.step`: a start-up given up meanwhile builds nothing more.
   */
  private async startUp(
    opts: RunOptions,
    resumeId: string | null,
    done: Promise<void>,
    su: StartUp,
  ): Promise<void> {
    const db = await su.step(STORAGE, this.database());
    let settings: RunSettings;
    let session: PipelineSession;
    if (resumeId) {
      // Held until the run ends, from before the run is read: two tabs never train (and store)
      // one run, and no tab deletes it meanwhile.
      if (!(await su.step("the run's lock", this.locks.hold(runLock(resumeId), done))))
        throw new Error(`run ${resumeId} is training in another tab of this page: stop it there first`);
      this.runId = resumeId; // from here on, its Delete is refused (also where Web Locks are missing)
      const record = await su.step(STORAGE, db.get('runs', resumeId));
      if (!record) throw new Error(`no stored run ${resumeId}`);
      if (runKind(record) !== 'code')
        throw new Error(
          `run ${resumeId} is ${runKind(record) === 'custom' ? "a custom environment's training" : "the trainer panel's saved weights"}: the run panel does not resume it`,
        );
      settings = settingsFromJson(record.config);
      validateSettings(settings);
      this.settings = settings;
      this.tasksFollowSaved = false;
      // The panel's own edits do not apply to a resumed run: it says so, rather than drop them unsaid.
      this.notify(
        `Resumed ${resumeId} with the settings it was started with (${howLabel(settings)}, ${trainsLabel(settings)}); the panel shows them now.`,
      );
      const point = await su.step(
        TRAINER,
        this.trainer.api.resumeRun(runInit(resumeId, settings), policyReset(settings)),
      );
      const [unconsumed, last, past] = await su.step(
        STORAGE,
        Promise.all([listUnconsumed(db, resumeId), lastKeys(db, resumeId), loadHistory(db, resumeId)]),
      );
      session = this.createSession(resumeId, settings, {
        version: point.version,
        ...resumeKeys(point.run.progress, unconsumed, last),
        ...replayFromRecords(unconsumed),
        progress: point.run.progress,
        hindsight: past.hindsight,
      });
      this.session = session;
      // The charts and the timeline go on from the run's stored history.
      this.firstVersion = point.version;
      this.steps = past.steps;
      this.evals = past.evals;
      session.log.push(...past.events);
      this.history = this.historyWriter(db, resumeId, past.nextEventSeq, session.log.pushed);
    } else {
      settings = this.settingsFor(opts);
      validateSettings(settings);
      const runId = newRunId();
      void this.locks.hold(runLock(runId), done);
      await su.step(
        TRAINER,
        this.trainer.api.resetPolicy({ ...policyReset(settings), startFrom: settings.startFrom }),
      );
      session = this.createSession(runId, settings, null);
      this.session = session; // from here on, a failure stops it (its listeners, the trainer's run)
      this.firstVersion = 0;
      this.history = this.historyWriter(db, runId, 0, 0);
      await su.step(TRAINER, this.trainer.api.startRun(session.runInit, session.progress()));
    }
    this.runId = session.runId;
    this.runSettings = settings;
    this.curriculum = session.source.curriculum.view();
    this.ticker = setInterval(() => void this.tick(), 250);
    await su.step('the rollout workers', session.start()); // a session stopped meanwhile starts no worker
    this.rolloutBackend = session.rolloutBackend;
    void this.refreshRuns();
    if ((opts.evalEvery ?? 10) > 0) this.evaluateNow(session.pipeline.version);
  }

  /** Stores the run's steps, evaluations and timeline events as they come (DESIGN §7). */
  private historyWriter(db: LabDB, runId: string, nextEventSeq: number, pushed: number): HistoryWriter {
    return new HistoryWriter(
      db,
      runId,
      { nextEventSeq, pushed },
      {
        onEvict: (e) => this.notify(evictionNotice(e, "the run's history")),
        onError: (m) => this.notify(m),
      },
    );
  }

  /**
   * Shows a stored run's history (its charts and its newest timeline events) without running
   * it: a finished race leg, a run of an earlier visit.
   */
  async view(runId: string): Promise<RunHistory | null> {
    if (this.running || this.comparing) return null;
    const db = await this.database();
    const record = await db.get('runs', runId);
    if (!record) {
      this.error = `no stored run ${runId}`;
      return null;
    }
    const past = await loadHistory(db, runId, { pool: false });
    this.error = null;
    this.notices = [];
    this.runId = runId;
    this.viewing = runId;
    const settings = settingsFromJson(record.config);
    this.runSettings = settings;
    this.steps = past.steps;
    this.evals = past.evals;
    this.events = past.events;
    this.metrics = past.steps.at(-1)?.metrics ?? null;
    // Where its curriculum stood (level, promotions) when the run last saved its progress.
    try {
      this.curriculum = jobSourceOf(settings, record.progress).curriculum.view();
    } catch {
      this.curriculum = null; // settings this page can no longer build a run from
    }
    this.dashboard = null;
    this.episodeTotals = record.progress?.counters ? totalsOf(record.progress.counters) : null;
    return past;
  }

  /**
   * Deletes a stored run and all of it (versions, trajectories, history); not the running one.
   * A notice says what went; the panel lets go of it where it showed or started from it.
   */
  async deleteStored(runId: string): Promise<void> {
    if ((this.running || this.comparing) && runId === this.runId) {
      this.error = `run ${runId} is running: stop it before deleting it`;
      return;
    }
    // Deleted under the run's lock: another tab cannot resume it meanwhile.
    let release = () => {};
    const deleted = new Promise<void>((resolve) => (release = resolve));
    if (!(await this.locks.hold(runLock(runId), deleted))) {
      this.error = `run ${runId} is training in another tab of this page: stop it there before deleting it`;
      await this.refreshRuns();
      return;
    }
    try {
      const gone = await deleteRun(await this.database(), runId);
      this.notify(
        `Deleted ${runId}: ${count(gone.versions, 'stored version')} (retention keeps the newest and every milestone) and ${count(gone.trajectories, 'trajectory', 'trajectories')}.`,
      );
      if (this.viewing === runId) {
        this.viewing = null;
        this.steps = [];
        this.evals = [];
        this.events = [];
        this.metrics = null;
      }
      if (this.runId === runId && !this.running) this.runId = null;
      if (this.settings.startFrom?.runId === runId) this.settings.startFrom = null;
    } catch (err) {
      this.error = `run ${runId} could not be deleted: ${errorMessage(err)}`;
    } finally {
      release();
    }
    await this.refreshRuns();
  }

  /** Settings of a new run: the panel's, with the options' overrides. */
  private settingsFor(opts: RunOptions): RunSettings {
    const base = $state.snapshot(this.settings) as RunSettings;
    const code: CodeRunConfig = {
      ...base.code,
      ...opts.run,
      ...(opts.learningRate ? { learningRate: opts.learningRate } : {}),
    };
    return { ...base, ...opts.settings, code, level: opts.level ?? opts.settings?.level ?? base.level };
  }

  private createSession(runId: string, settings: RunSettings, restored: Restored | null): PipelineSession {
    return new PipelineSession(
      runId,
      settings,
      this.trainer,
      {
        onStep: (r) => this.stepped(r),
        onError: (m) => {
          this.error = this.storageGone ?? m;
          void this.end('failed');
        },
        onNotice: (m) => this.notify(m),
      },
      restored,
      (name, onCrash) => new RolloutBridge(name, onCrash),
    );
  }

  private stepped(r: StepReport): void {
    this.history?.step(r); // the step published at Stop too, after the session is let go
    this.steps = [...this.steps, r];
    this.metrics = r.metrics;
    const s = this.session;
    if (!s) return;
    this.curriculum = s.source.curriculum.view();
    const o = this.opts;
    const firstVersion = this.firstVersion;
    if ((o.evalEvery ?? 10) > 0 && (r.version - firstVersion) % (o.evalEvery ?? 10) === 0)
      void this.evaluateNow();
    if (r.version % 5 === 0) void this.refreshRuns(); // the run list's counts
    if (r.version % POOL_EVERY === 0) this.history?.hindsight(s.source.hindsight.snapshot());
    if (o.maxIterations !== undefined && r.version - firstVersion >= o.maxIterations) void this.finish();
    if (o.maxTrainedEpisodes !== undefined && s.pipeline.counters.trainedEpisodes >= o.maxTrainedEpisodes)
      void this.finish();
  }

  /**
   * Chooses what new runs train on: a saved suite (a copy goes into the settings, and follows the
   * suite as it is edited in the page until another choice), or null for the built-in tasks.
   */
  chooseTasks(suite: TaskSuite | null): void {
    this.settings.tasks = suite ? structuredClone(suite) : null;
    this.tasksFollowSaved = suite !== null;
  }

  /**
   * The page's saved suites, as they are now: a chosen saved suite that was edited (a task added
   * to "my tasks") is copied again. Tasks that came with a share link or a stored run are kept.
   */
  syncSavedSuites(saved: readonly TaskSuite[]): void {
    const chosen = this.settings.tasks;
    if (!chosen || !this.tasksFollowSaved || this.running) return;
    const now = saved.find((s) => s.name === chosen.name);
    if (now && JSON.stringify(now) !== JSON.stringify(chosen)) this.settings.tasks = structuredClone(now);
  }

  /**
   * Takes the settings of a share link (the value of its `?run=`; null: no link): a notice says
   * so, or the run panel's error says what is wrong with the link (the defaults stay).
   */
  async applyShareLink(param: string | null): Promise<void> {
    if (param === null) return;
    try {
      this.settings = await settingsFromShare(param);
      this.tasksFollowSaved = false;
      this.notify(`Settings from the share link (seed ${this.settings.seed}).`);
    } catch (err) {
      this.error = errorMessage(err);
    }
  }

  /**
   * A link to this page with the current settings (`base`: the page's URL); also copied when the
   * browser allows. Settings a run would refuse make no link: the run panel's error says why.
   */
  async makeShareLink(base: string): Promise<string | null> {
    const settings = $state.snapshot(this.settings) as RunSettings;
    let link: string;
    try {
      validateSettings(settings);
      link = await shareUrl(base, settings);
    } catch (err) {
      this.shareLink = null;
      this.error = `no share link: ${errorMessage(err)}`;
      return null;
    }
    // Settings edited while the link was deflated: it would share the old ones, so none is shown.
    if (JSON.stringify($state.snapshot(this.settings)) !== JSON.stringify(settings)) return null;
    if (this.error?.startsWith('no share link:')) this.error = null; // an earlier run's error stays
    this.shareLink = link;
    this.shareLinkCopied =
      (await navigator.clipboard?.writeText(link).then(
        () => true,
        () => false,
      )) ?? false;
    return link;
  }

  /** Refreshes the dashboard and the timeline (4 times a second while running). */
  private async tick(s = this.session): Promise<void> {
    if (!s) return;
    let storage: Dashboard['storage'] = this.dashboard?.storage ?? null;
    if (
      typeof navigator !== 'undefined' &&
      navigator.storage?.estimate &&
      (this.estimates++ % 8 === 0 || !storage)
    ) {
      const e = await navigator.storage.estimate().catch(() => null);
      storage = e ? { usage: e.usage ?? 0, quota: e.quota ?? 0 } : storage;
    }
    // Everything else is read after the await, in one go: the timeline and the dashboard agree
    // (a fault replaced during the estimate shows in both or in neither).
    const p = s.pipeline;
    const seconds = (now() - p.startedAt) / 1000;
    let hits = 0;
    let total = 0;
    const sandboxes: string[] = [];
    const workers = s.workerStats();
    for (const { stats } of workers) {
      if (stats?.sandbox && !sandboxes.includes(stats.sandbox)) sandboxes.push(stats.sandbox);
      hits += stats?.cache.hits ?? 0;
      total += (stats?.cache.hits ?? 0) + (stats?.cache.misses ?? 0);
    }
    // Once the run has stopped its workers are gone: their last figures stay on the dashboard.
    const kept = p.isStopped && workers.length === 0 ? this.dashboard : null;
    this.events = [...s.log.events];
    this.history?.flushEvents(s.log);
    this.episodeTotals = totalsOf(s.runCounters());
    const lat = adoptionLatencies(s.log.events, s.lanes);
    this.dashboard = {
      version: p.version,
      counters: { ...p.counters, stalenessHistogram: { ...p.counters.stalenessHistogram } },
      samplesPerSec: p.counters.trainedEpisodes / Math.max(1e-3, seconds),
      generatedPerSec: p.counters.generatedEpisodes / Math.max(1e-3, seconds),
      trainerBusy: p.trainerBusyFraction(),
      running: p.runningGroups,
      waiting: p.waitingGroups,
      heldByEta: p.slotsHeldByEta,
      buffered: p.buffer.size,
      maxConcurrent: p.maxConcurrent,
      cacheHitRate: kept ? kept.cacheHitRate : total > 0 ? hits / total : null,
      sandboxes: kept ? kept.sandboxes : sandboxes,
      hindsight: {
        relabelled: s.source.hindsight.added,
        distinct: s.source.hindsight.distinct,
        posed: s.source.posed,
      },
      adoptP95Ms: lat.length ? percentile(lat, 95) : null,
      policyBytes: lastPolicyBytes(s.log.events),
      faults: s.faults.map((f) => ({ ...f })), // copies: the pool fills in replacedAt later
      seconds: s.seconds,
      startedAt: p.startedAt,
      storage,
      setup: {
        eta: s.settings.eta,
        workers: s.settings.workers,
        cores: typeof navigator === 'undefined' ? 2 : navigator.hardwareConcurrency,
        batchGroups: s.settings.code.tasksPerBatch,
      },
    };
  }

  /**
   * Queues a greedy evaluation of `version` (the newest stored when omitted; in a worker of its
   * own, so the rollout workers keep playing), which appends its point. The run's suite and level
   * are taken now: the page may show another run by the time it starts.
   */
  private evaluateNow(version?: number): void {
    const runId = this.runId;
    if (!runId) return;
    const level =
      this.opts.level ?? (this.settings.code.curriculum.enabled ? (this.curriculum?.level ?? 'easy') : 'all');
    this.evaluations.ask({ runId, settings: this.runSettings, level, version });
  }

  private async evaluateRequested(r: EvalRequest): Promise<void> {
    const point = await this.evaluateStored(r.runId, r.settings, r.level, r.version);
    if (point && this.runId === r.runId) {
      this.evals = [...this.evals, point];
      if (this.history?.runId === r.runId) this.history.evaluation(point);
    }
  }

  /**
   * Greedy success of a stored version of a run (the newest when `version` is omitted or was
   * pruned meanwhile) on the tasks of `level` (`runEvaluationTasks`: a run's own suite, or an evenly
   * spaced sample of it when large).
   */
  private async evaluateStored(
    runId: string,
    settings: Pick<RunSettings, 'tasks'>,
    level: Level | 'all',
    version?: number,
  ): Promise<EvalPoint | null> {
    const db = await this.database();
    const record =
      (version === undefined ? undefined : await getVersion(db, runId, version)) ??
      (await latestVersion(db, runId));
    if (!record) return null;
    // A LoRA version holds only adapters: the evaluator merges them into the run's base.
    const base = await loraBaseOf(db, record);
    const tasks = runEvaluationTasks(settings, generateTasks(BUILT_IN_SEED), level);
    const rows = await this.evaluator.use(async (worker) => {
      await worker.api.loadPolicy(record.checkpoint, record.version, base);
      return worker.api.evaluate({ tasks, agents: ['policy'], samples: 0, seed: 1 });
    });
    const f = agentFigures(rows, 'policy');
    const train = rows.find((r) => r.agent === 'policy' && r.split === 'train' && r.level === 'all');
    return {
      iteration: record.version,
      seconds: (performance.now() - this.t0) / 1000,
      episodes: this.session?.pipeline.counters.generatedEpisodes ?? 0,
      level,
      suite: settings.tasks?.name ?? null,
      successTrain: f.successTrain ?? 0,
      successHeldOut: f.successHeldOut,
      meanRewardTrain: train?.meanReward ?? 0,
    };
  }

  /** Evaluates the newest stored version of the current (or last) run now, after any queued evaluation. */
  async evaluateLatest(level: Level | 'all'): Promise<EvalPoint> {
    const runId = this.runId;
    if (!runId) throw new Error('no run to evaluate');
    const settings = this.runSettings;
    const point = await this.evaluations.run(() => this.evaluateStored(runId, settings, level));
    if (!point) throw new Error(`run ${runId} has no stored version`);
    this.evals = [...this.evals, point];
    if (this.history?.runId === runId) this.history.evaluation(point);
    return point;
  }

  /** Resolves when every queued evaluation is done. */
  evaluationsDone(): Promise<void> {
    return this.evaluations.idle();
  }

  /** Stops the run: scheduling ends, the trainer's step in progress is published, the run is paused (resumable). */
  async stop(): Promise<void> {
    await this.end('paused');
  }

  /** Ends the run as a Stop does, having reached what it was asked for (the panel says "Finishing…"). */
  private async finish(): Promise<void> {
    this.finishing = true;
    await this.end('paused');
  }

  private async end(status: 'paused' | 'failed'): Promise<void> {
    if (this.starting) {
      // The start-up is in progress: it ends the run as soon as it has built what it stops, or
      // once it is given up for not ending in time.
      this.endRequested = this.endRequested === 'failed' ? 'failed' : status;
      this.stopping = true;
      this.starting.startup.stopWithin(STOP_STARTUP_MS);
      return this.starting.done;
    }
    const s = this.session;
    if (this.ending || (!s && !this.running)) return;
    this.ending = true;
    this.stopping = true;
    this.session = null;
    clearInterval(this.ticker);
    if (s) {
      await s.stop(status);
      await this.tick(s).catch(() => undefined); // the final figures, after the last step
      this.history?.hindsight(s.source.hindsight.snapshot()); // what Resume trains on again
      await this.history?.settled(); // a reload right after Stop finds the whole history
    }
    this.trainer.lease.release('run');
    this.running = false;
    this.ending = false;
    this.stopping = false;
    this.finishing = false;
    // The list has the run's newest version before a Stop resolves: a "start from" picked right
    // after it took the version listed at the run's start (0), a race the LoRA e2e test lost.
    await settlesWithin(
      this.refreshRuns().catch(() => undefined),
      REFRESH_WAIT_MS,
    );
    this.finished?.();
    this.finished = null;
  }

  /** Stored seqs of a run's trajectories, all or the unconsumed (tests count them across a reload). */
  async storedSeqs(runId = this.runId, which: 'all' | 'unconsumed' = 'all'): Promise<number[]> {
    if (!runId) return [];
    const db = await this.database();
    return which === 'all' ? listSeqs(db, runId) : (await listUnconsumed(db, runId)).map((r) => r.seq);
  }
}
