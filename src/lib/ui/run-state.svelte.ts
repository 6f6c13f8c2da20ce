import { errorMessage } from '../errors';
import type { CurriculumView } from '../env/curriculum';
import type { Level } from '../env/suite';
import type { StepMetrics } from '../policy/metrics';
import { now, type TimelineEvent } from '../pipeline/events';
import { defaultRunConfig, type RunConfig } from '../config/run-config';
import type { EvalPoint, StepReport } from '../pipeline/types';
import { POINTS_KEPT, type RunHistory } from '../storage/history-store';
import { browserCodeRuns, type PageStorage } from '../run/browser';
import { codeRunEntries, RunCatalog, showCodeRun, type RunListEntry } from '../run/catalog';
import type { CodeRun, CodeRunEvent } from '../run/code-run';
import { fieldSweepPlan, raceEtas, sweepPlan, RACE_SAMPLES } from '../run/comparison-plans';
import type { FieldSweep } from '../config/field-sweep';
import type { SweepLegSettings } from '../config/presets';
import {
  SWEEP_ETAS,
  SWEEP_LOSSES,
  SWEEP_SAMPLES,
  type Comparison,
  type Leg,
  type LegPlan,
} from '../run/comparison-plans';
import { dashboardOf, episodeTotals, machineCores, StorageEstimates, type Dashboard } from '../run/dashboard';
import { playableTasks, type Evaluations } from '../run/evaluations';
import type { EvalTask } from '../env/evaluate';
import { listVersions } from '../storage/weights-store';
import type { FeedEpisode } from '../view/program-feed';
import { howLabel, storedStart, trainsLabel } from '../run/labels';
import { evaluates, evaluationLevel, settingsFor, type RunOptions } from '../run/options';
import type { PipelineSession } from '../run/session';
import type { LedgerView, SeqLedger } from '../pipeline/ledger';
import type { Finding } from '../stats/doctor';
import type { FindingRecord } from '../stats/doctor-tracker';
import type { TrainingDoctor } from '../stats/training-doctor';
import { lazyModule } from '../lazy';
import { downloadBytes } from '../view/download';
import { appended } from '../view/thin';
import type { PickedFile, RunExport } from '../run/export-run';
import { HoldState } from './hold-state.svelte';
import { FeedState } from './feed-state.svelte';
import { RunSettingsState } from './run-settings-state.svelte';
import type { TrainerState } from './trainer-state.svelte';

export type {
  Comparison,
  Dashboard,
  EvalPoint,
  Finding,
  FindingRecord,
  Leg,
  PickedFile,
  RunListEntry,
  RunOptions,
};

/** What the last export or import of the Runs view did: done, or refused with the reason. */
export interface Transfer {
  ok: boolean;
  message: string;
}
export {
  howLabel,
  loraLabel,
  resumable,
  startFromOf,
  startFromValue,
  storedStart,
  trainsLabel,
} from '../run/labels';
// What the settings and metrics panels show of the layers below: evaluated tasks, the model's
// size and bases, what storage keeps of a run.
export { EVAL_TRAINING_TASKS } from '../pipeline/run-tasks';
export { DEFAULT_MODEL_ARGS } from '../policy/config';
export { BUILT_IN_BASES } from '../policy/bases';
export { EVENTS_KEPT, POINTS_KEPT } from '../storage/history-store';
export { modelParameterCount, retentionSchedule, versionStorage } from '../storage/retention';
export { raceEtas, RACE_SAMPLES, SWEEP_ETAS, SWEEP_LOSSES, SWEEP_SAMPLES };

/** The training doctor (`stats/training-doctor`): a chunk of its own, apart from the page's main bundle. */
const loadDoctor = lazyModule(() => import('../stats/training-doctor'));

/**
 * The run panel's view of code runs: what it shows of the run in progress (a `CodeRun`), of a
 * stored one, of the run list (`RunCatalog`), evaluations and comparisons. It holds view state
 * only; the run layer (`lib/run/`) does the work and tells it what happened.
 */
export class RunState extends RunSettingsState {
  runId = $state<string | null>(null);
  /** A Stop is in progress: the step in progress publishes first, or the start-up finishes. */
  stopping = $state(false);
  /** The run ends because it reached the versions or episodes it was asked for, not by a Stop. */
  finishing = $state(false);
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
  session: PipelineSession | null = null; // the live session (null between runs)
  /** The episodes of the newest session by seq (kept once it stopped: `ledger()`). */
  private lastLedger: SeqLedger | null = null;
  readonly hold: HoldState; // Pause, Resume and Step of the running run, and its status line
  readonly feed = new FeedState(); // the program feed: the run's newest episodes and best programs
  /** The training doctor's standing findings on the run shown, most serious first. */
  findings = $state.raw<Finding[]>([]);
  /** Every finding the doctor made on the run shown, with the versions it fired and was withdrawn at. */
  findingHistory = $state.raw<FindingRecord[]>([]);

  /** The stored run being exported now, or null. */
  exporting = $state<string | null>(null);
  /** An import is being read and checked. */
  importing = $state(false);
  /** What the last export or import did, or null. */
  transfer = $state.raw<Transfer | null>(null);

  /** Tasks in the shown run's own suite (null: the built-in suite), for what its evaluations score. */
  get suiteTasks(): number | null {
    return this.runSettings.task.suite?.tasks.length ?? null;
  }

  private readonly catalog: RunCatalog;
  private readonly run: CodeRun;
  private readonly evaluations: Evaluations;
  private readonly estimates = new StorageEstimates();
  /** Greedy plays of stored versions so far: each one's feed entry is keyed by its count. */
  private plays = 0;
  private ticker: ReturnType<typeof setInterval> | undefined;
  private opts: RunOptions = {};
  /** What the current (or last) run trains on, for its evaluations. */
  private runSettings = $state.raw<Pick<RunConfig, 'task' | 'env'>>(defaultRunConfig());
  /** Reads of the run list started so far (`refreshRuns` keeps only the newest one's). */
  private runsRead = 0;
  /** The doctor of the running run (null between runs), and what ties it to the session's played groups. */
  private doctor: { runId: string; doctor: TrainingDoctor } | null = null;
  /** The doctor's code, once fetched: a run's start-up waits for it (`beforeSession`). */
  private doctorCode: typeof import('../stats/training-doctor') | null = null;
  private unfollowDoctor: (() => void) | null = null;

  /** `storage`: the page's one connection (`PageStorage`), shared with the other panels. */
  constructor(trainer: TrainerState, storage: PageStorage) {
    super();
    const made = browserCodeRuns(trainer, storage, {
      notify: (m) => this.notify(m),
      scored: (runId, point) => this.scored(runId, point),
      afterStop: (s) => this.tick(s), // the final figures, after the last step
      afterEnd: () => this.refreshRuns(), // the list has the run's newest version before a Stop resolves
      beforeSession: async () => {
        this.doctorCode = await loadDoctor(); // what followDoctor makes the run's doctor with
      },
    });
    // The training doctor is a chunk of its own: fetched now, a run does not wait for it.
    loadDoctor().catch(() => undefined);
    [this.catalog, this.run, this.evaluations] = [made.catalog, made.run, made.evaluations];
    this.run.subscribe((e) => this.heard(e));
    this.hold = new HoldState(this.run);
    // Another tab started, stopped or deleted a run: this tab's list says so without a reload.
    this.catalog.onElsewhereChange(() => void this.refreshRuns().catch(() => undefined));
  }

  /** Reads the stored runs for the run list (overlapping reads: only the newest one's list is kept). */
  async refreshRuns(): Promise<void> {
    const seq = ++this.runsRead;
    const listed = await codeRunEntries(this.catalog, this.running ? this.runId : null);
    if (seq === this.runsRead) this.runs = listed;
  }

  /**
   * Downloads run `runId`'s export (`run/export-run.ts`, loaded on first use): its newest version,
   * or `version`, as a zip, with its greedy play of the held-out tasks from the evaluation worker. A policy the exporter refuses (the copy head) says why; nothing is
   * downloaded then.
   */
  async exportRun(runId: string, version?: number): Promise<RunExport | null> {
    this.exporting = runId;
    try {
      const { exportRun } = await import('../run/export-run');
      const out = await exportRun(await this.catalog.database(), runId, version, (record, base, req) =>
        this.evaluations.greedyExport(record, base, req),
      );
      downloadBytes(out.zip, out.fileName, 'application/zip');
      this.transfer = {
        ok: true,
        message: `Exported ${runId} version ${out.version} as ${out.fileName}: the GPT-2 folder, ${out.tasks} tasks, ${out.trajectories} trajectories, ${out.greedyError === undefined ? `${out.greedy} greedy programs` : `no greedy programs (the greedy play failed: ${out.greedyError})`}.`,
      };
      return out;
    } catch (err) {
      this.transfer = { ok: false, message: `${runId} was not exported: ${errorMessage(err)}` };
      return null;
    } finally {
      this.exporting = null;
    }
  }

  /**
   * Imports a Hugging Face GPT-2 folder of our vocabulary (its files, or a zip) as a stored run of
   * one version, which "start from" offers; a folder that does not fit is refused with what is
   * wrong, and nothing stored changes. Returns the new run's id, or null.
   */
  async importPolicy(picked: readonly PickedFile[], label: string): Promise<string | null> {
    this.importing = true;
    try {
      const { importPolicy } = await import('../run/export-run');
      const done = await importPolicy(await this.catalog.database(), picked, label);
      this.transfer = {
        ok: true,
        message: `Imported ${label} as ${done.runId} (${done.parameters} parameters): choose it under "start from".`,
      };
      await this.refreshRuns();
      return done.runId;
    } catch (err) {
      this.transfer = { ok: false, message: `${label} was not imported: ${errorMessage(err)}` };
      return null;
    } finally {
      this.importing = false;
    }
  }

  /** Starts a new run; resolves when it ends (stopped, finished, or failed). */
  start(opts: RunOptions = {}): Promise<void> {
    if (this.running) return Promise.resolve();
    this.opts = opts;
    return this.run.start(settingsFor($state.snapshot(this.settings) as RunConfig, opts), opts);
  }

  /** Resumes a stored run from its newest version; resolves when it ends. */
  resume(runId: string, opts: RunOptions = {}): Promise<void> {
    if (this.running) return Promise.resolve();
    this.opts = opts;
    return this.run.resume(runId, opts);
  }

  /**
   * Stops the run: scheduling ends, the trainer's step in progress is published, the run is paused
   * (resumable). Resolves once an evaluation still in flight is shown and stored too.
   */
  async stop(): Promise<void> {
    await this.run.stop();
    await this.evaluations.idle();
    await this.run.history?.settled();
  }

  /** The sync-vs-async race (DESIGN §9): η = 0, then the panel's η (4 when it is 0), over the same samples. */
  race(samples = RACE_SAMPLES): Promise<Leg[]> {
    const plan = raceEtas(this.settings.pipeline.eta).map((eta) => ({ eta }));
    return this.compare('race', plan, samples, false);
  }

  /**
   * The staleness sweep (DESIGN §9): each η of `etas` with each of `losses` and `legs`' settings,
   * each cell with every seed of `seeds` (none: the panel's), each leg evaluated.
   */
  sweep(
    samples = SWEEP_SAMPLES,
    etas = SWEEP_ETAS,
    losses = SWEEP_LOSSES,
    legs: SweepLegSettings = {},
    seeds: readonly number[] = [],
  ) {
    return this.compare('sweep', sweepPlan(etas, losses, legs, seeds), samples, true);
  }

  /**
   * A sensitivity sweep: the panel's settings with `spec`'s field at each value, with each seed,
   * `samples` episodes a leg, each leg evaluated. Throws naming the field on a bad value or seed.
   */
  async fieldSweep(spec: FieldSweep, samples: number): Promise<Leg[]> {
    const settings = $state.snapshot(this.settings) as RunConfig;
    // The sweep's code loads with it (the first screen has only its time estimate).
    const { fieldSweepLegs } = await import('../config/field-sweep');
    const plan = fieldSweepPlan(fieldSweepLegs(settings, spec), settings.pipeline.eta);
    return this.compare('field', plan, samples, true);
  }

  private async compare(kind: Comparison['kind'], plan: LegPlan[], samples: number, evaluate: boolean) {
    if (this.running || this.comparing) return this.comparison?.legs ?? [];
    this.comparing = true;
    try {
      // The running code is a chunk of its own, fetched on the first comparison.
      const { compare, viewLegRunner } = await import('../run/comparisons');
      return await compare(kind, plan, samples, evaluate, viewLegRunner(this));
    } finally {
      this.comparing = false;
    }
  }

  /** What the code run said: the view follows it. */
  private heard(e: CodeRunEvent): void {
    if (e.kind === 'state') {
      this.running = this.run.active;
      this.stopping = e.phase === 'stopping';
      if (e.phase === 'starting') {
        [this.finishing, this.error, this.notices, this.viewing] = [false, null, [], null];
        this.show([], [], []);
        this.episodeTotals = null;
        this.doctor = null;
      } else if (e.phase === 'running' && this.session) {
        this.rolloutBackend = this.session.rolloutBackend;
        void this.refreshRuns();
        if (evaluates(this.opts)) this.evaluateNow(this.session.pipeline.version);
      } else if (e.phase === 'idle' || e.phase === 'failed') this.finishing = false;
    } else if (e.kind === 'resuming')
      this.runId = e.runId; // from here on, its Delete is refused
    else if (e.kind === 'settings') {
      this.settings = e.settings;
      this.tasksFollowSaved = false;
      // The panel's own edits do not apply to a resumed run: it says so, rather than drop them unsaid.
      this.notify(
        `Resumed ${e.runId} with the settings it was started with (${howLabel(e.settings)}, ${trainsLabel(e.settings)}); the panel shows them now.`,
      );
    } else if (e.kind === 'resumed') [this.steps, this.evals] = [e.history.steps, e.history.evals];
    else if (e.kind === 'session') {
      clearInterval(this.ticker);
      this.session = this.feed.follow(e.session);
      this.unfollowDoctor?.();
      this.unfollowDoctor = null;
      if (!e.session) return;
      this.lastLedger = e.session.pipeline.ledger;
      [this.runId, this.runSettings] = [e.session.runId, e.session.settings];
      this.curriculum = e.session.source.curriculum.view();
      this.ticker = setInterval(() => void this.tick(), 250);
      this.followDoctor(e.session);
    } else if (e.kind === 'step') this.stepped(e.report);
    else if (e.kind === 'finishing') this.finishing = true;
    else if (e.kind === 'notice') this.notify(e.message);
    else if (e.kind === 'error') {
      this.error = e.message;
      const version = this.steps.at(-1)?.version ?? 0;
      if (this.doctor?.doctor.failed(e.message, version)) this.diagnose();
    }
  }

  /**
   * The doctor of the session's run: a resumed session of the same run goes on with its doctor,
   * another run starts a new one; it reads every group played and the series so far.
   */
  private followDoctor(session: PipelineSession): void {
    const code = this.doctorCode;
    if (!code) return; // (not so: a session is built once its code is here, `beforeSession`)
    if (this.doctor?.runId !== session.runId)
      this.doctor = { runId: session.runId, doctor: new code.TrainingDoctor(session.settings) };
    const doctor = this.doctor.doctor;
    this.unfollowDoctor = session.onPlayed((_job, group) => doctor.played(group));
    this.diagnose();
  }

  /** Diagnoses the run's series as the charts hold them, and shows the doctor's findings. */
  private diagnose(): void {
    const d = this.doctor?.doctor;
    if (!d) return;
    d.check(this.steps, this.evals, this.curriculum);
    [this.findings, this.findingHistory] = [d.current, d.history];
  }

  /** Shows these charts and timeline events (none: empty panels). */
  private show(steps: StepReport[], evals: EvalPoint[], events: readonly TimelineEvent[]): void {
    [this.steps, this.evals, this.events] = [steps, evals, events];
    this.metrics = steps.at(-1)?.metrics ?? null;
    [this.findings, this.findingHistory] = [[], []];
  }

  private stepped(r: StepReport): void {
    this.steps = appended(this.steps, r, POINTS_KEPT.step);
    this.metrics = r.metrics;
    const s = this.session;
    if (!s) return;
    this.curriculum = s.source.curriculum.view();
    this.diagnose();
    if (evaluates(this.opts, r.version, this.run.firstVersion)) this.evaluateNow();
    if (r.version % 5 === 0) void this.refreshRuns(); // the run list's counts
  }

  /** Shows a stored run's history (charts, newest timeline events) without running it. */
  async view(runId: string): Promise<RunHistory | null> {
    if (this.running || this.comparing) return null;
    const [shown, { TrainingDoctor }] = await Promise.all([
      this.catalog.database().then((db) => showCodeRun(db, runId)),
      loadDoctor(),
    ]);
    if (!shown) {
      this.error = `no stored run ${runId}`;
      return null;
    }
    const past = shown.history;
    [this.error, this.notices, this.runId, this.viewing] = [null, [], runId, runId];
    this.runSettings = shown.settings;
    this.show(past.steps, past.evals, past.events);
    this.dashboard = null;
    this.curriculum = shown.curriculum; // where it stood when the run last saved its progress
    // What the doctor finds in the stored series as they ended (no programs: those are not stored).
    const doctor = new TrainingDoctor(shown.settings);
    doctor.check(past.steps, past.evals, shown.curriculum);
    [this.findings, this.findingHistory] = [doctor.current, doctor.history];
    const counters = shown.record.progress?.counters;
    this.episodeTotals = counters ? episodeTotals(counters) : null;
    return past;
  }

  /** Deletes a stored run and all of it; not the running one. The panel lets go of it where it showed it. */
  async deleteStored(runId: string): Promise<void> {
    if ((this.running || this.comparing) && runId === this.runId) {
      this.error = `run ${runId} is running: stop it before deleting it`;
      return;
    }
    try {
      const gone = await this.catalog.delete(runId);
      if (!gone.deleted) {
        this.error = `run ${runId} is training in another tab of this page: stop it there before deleting it`;
      } else {
        this.notify(RunCatalog.deletedNotice(runId, gone));
        if (this.viewing === runId) {
          this.viewing = null;
          this.show([], [], []);
        }
        if (this.runId === runId && !this.running) this.runId = null;
        if (storedStart(this.settings.policy.startFrom)?.runId === runId)
          this.settings.policy.startFrom = null;
      }
    } catch (err) {
      this.error = `run ${runId} could not be deleted: ${errorMessage(err)}`;
    }
    await this.refreshRuns();
  }

  /** Refreshes the dashboard and the timeline (4 times a second while running). */
  private async tick(s = this.session): Promise<void> {
    if (!s) return;
    const storage = await this.estimates.read(this.dashboard?.storage ?? null);
    // Everything else is read after the await, in one go: the timeline and the dashboard agree.
    this.events = [...s.log.events];
    this.run.history?.flushEvents(s.log);
    this.episodeTotals = episodeTotals(s.runCounters());
    const moment = {
      now: now(),
      workers: s.workerStats(),
      cores: machineCores(),
      storage,
      previous: this.dashboard,
      steps: this.steps,
    };
    this.dashboard = dashboardOf(s, moment);
  }

  /** Queues a greedy evaluation of `version` (the newest stored when omitted) with the run's suite and level now. */
  private evaluateNow(version?: number): void {
    const runId = this.runId;
    if (!runId) return;
    const level = evaluationLevel(this.runSettings, this.curriculum);
    this.evaluations.ask({ runId, settings: this.runSettings, level, version });
  }

  private scored(runId: string, point: EvalPoint): void {
    if (this.runId !== runId) return;
    this.evals = [...this.evals, point];
    if (this.run.history?.runId === runId) this.run.history.evaluation(point);
  }

  /** Evaluates the newest stored version of the current (or last) run now, after any queued evaluation. */
  async evaluateLatest(level: Level | 'all'): Promise<EvalPoint> {
    const runId = this.runId;
    if (!runId) throw new Error('no run to evaluate');
    const point = await this.evaluations.latest({ runId, settings: this.runSettings, level });
    this.evals = [...this.evals, point];
    if (this.run.history?.runId === runId) this.run.history.evaluation(point);
    return point;
  }

  /** The tasks a stored version of the run shown can be played on (training, held-out, generalisation). */
  get playTasks(): EvalTask[] {
    return playableTasks(this.runSettings);
  }

  /** Versions stored for the run shown, ascending (none while no run is shown). */
  async storedVersions(): Promise<number[]> {
    return this.runId ? listVersions(await this.catalog.database(), this.runId) : [];
  }

  /**
   * Plays stored version `version` of the run shown greedily on task `taskId` in the evaluation
   * worker and shows the episode at the top of the feed, marked as a replay; nothing of the run is
   * written and its pipeline goes on. Throws `VersionGone` when the version is no longer stored.
   */
  async playGreedily(version: number, taskId: string, onLoaded?: () => void): Promise<FeedEpisode> {
    const runId = this.runId;
    if (!runId) throw new Error('no run is shown: train one, or show a stored run on Runs');
    const played = await this.evaluations.play(
      { runId, settings: this.runSettings, version, taskId },
      onLoaded,
    );
    const { replayEpisode } = await import('../view/greedy-play');
    const episode = replayEpisode(played, ++this.plays);
    // Another run shown meanwhile keeps its feed: the episode is returned, not shown.
    if (this.runId === runId) this.feed.showReplay(episode, runId);
    return episode;
  }

  /** Resolves when every queued evaluation is done. */
  evaluationsDone(): Promise<void> {
    return this.evaluations.idle();
  }

  /** Where each episode of the newest session went, by seq (the chaos bench and tests account for them). */
  ledger(): LedgerView | null {
    return this.lastLedger?.view() ?? null;
  }

  /** Stored seqs of a run's trajectories, all or the unconsumed (tests count them across a reload). */
  async storedSeqs(runId = this.runId, which: 'all' | 'unconsumed' = 'all'): Promise<number[]> {
    return runId ? this.catalog.storedSeqs(runId, which) : [];
  }
}
