import { errorMessage } from '../errors';
import { lazyModule } from '../lazy';
import { runConfigFromJson, validateRunConfig, type RunConfig } from '../config/run-config';
import { replayFromRecords, resumeKeys } from '../storage/resume';
import type { HoldControl, HoldView } from '../pipeline/hold';
import type { StepReport } from '../pipeline/types';
import type { LabDB } from '../storage/db';
import { HistoryWriter, loadHistory, POOL_EVERY, type RunHistory } from '../storage/history-store';
import { evictionNotice } from '../storage/quota';
import { lastKeys, listUnconsumed } from '../storage/trajectories-store';
import { runKind } from '../storage/weights-store';
import { settlesWithin } from './failure-signal';
import type { Restored } from './pipeline';
import { newRunId, runInit } from './run-init';
import type { RolloutFactory } from './rollout-pool';
import type { PipelineSession, RunTrainer } from './session';
import { StartUp } from './start-up';
import { statusOf } from './trainer-lease';

/** Where a code run is: idle → starting → running → stopping → idle (or failed, as idle but after an error). */
export type CodeRunPhase = 'idle' | 'starting' | 'running' | 'stopping' | 'failed';

/** When a run ends by itself (the bench and the tests set them; a Stop ends any run). */
export interface RunLimits {
  /** Stop after this many published versions (training steps) of this session. */
  maxIterations?: number;
  /** Stop once this many episodes have been trained on (the pipeline bench's equal samples). */
  maxTrainedEpisodes?: number;
}

/** What a code run tells its view, in order. */
export type CodeRunEvent =
  | { kind: 'state'; phase: CodeRunPhase }
  /** A stored run is to be resumed: this tab holds its lock (from here on its Delete is refused). */
  | { kind: 'resuming'; runId: string }
  /** The resumed run's stored settings (the panel's own edits do not apply to it). */
  | { kind: 'settings'; runId: string; settings: RunConfig }
  /** The resumed run's stored history (charts, timeline), read before it trains again. */
  | { kind: 'resumed'; runId: string; history: RunHistory }
  /** The run's session is built (its pipeline, job source and log); null as it stops. */
  | { kind: 'session'; session: PipelineSession | null }
  | { kind: 'step'; report: StepReport }
  /** Pause / Step of the running run: where they stand now (held, still finishing, stepping, running). */
  | { kind: 'hold'; hold: HoldView }
  /** The run reached its limits: it ends as a Stop does. */
  | { kind: 'finishing' }
  | { kind: 'notice'; message: string }
  | { kind: 'error'; message: string };

/** What a code run needs: the trainer, the storage, the run's lock, and how rollout workers are made. */
export interface CodeRunDeps {
  trainer: RunTrainer;
  database(): Promise<LabDB>;
  /** Holds the run's lock until `until` settles; false when another tab holds it. */
  hold(runId: string, until: Promise<void>): Promise<boolean>;
  createRollout: RolloutFactory;
  /** The id of a new run (its start time by default). */
  newRunId?: () => string;
  /**
   * What the view does with a stopped session before the run is idle (its last figures); then,
   * once idle, before the run's promise resolves (the run list).
   */
  afterStop?(session: PipelineSession): Promise<void>;
  afterEnd?(): Promise<void>;
  /** What the view needs before it hears of a session (code it fetches apart: the training doctor). */
  beforeSession?(): Promise<void>;
}

/**
 * How long a Stop waits for a run's start-up to end by itself before giving it up, ms. A start-up
 * here takes a few seconds (its rollout workers' backends and sandboxes); one that does not end
 * within this waits on something that does not answer (a hung trainer, a blocked storage open).
 */
export const STOP_STARTUP_MS = 20_000;
/**
 * How long the end of a run waits for the view's `afterEnd`, ms: a read of the storage, which no
 * bridge bounds (another tab may block it).
 */
const AFTER_END_MS = 5_000;
/** What a start-up step waits on, as a Stop that gives it up names it. */
const TRAINER = 'the trainer';
const STORAGE = 'the storage';
const PIPELINE = "the run's pipeline";

/**
 * The run's session and what it assembles (the pipeline, its workload, the worker pool): a chunk
 * of its own, apart from the page's main bundle. The page fetches it as it starts
 * (`browserCodeRuns`), so a start-up finds it loaded.
 */
export const loadSession = lazyModule(() => import('./session'));

/**
 * One code run's life: it takes the trainer, starts (new, or resumed from its newest stored
 * version under the run's lock), trains until a Stop, its limits or a failure, and stops. A
 * trainer crash or a Stop that the start-up does not answer in time gives the start-up up
 * (`StartUp`); a crash once running restarts the trainer from the store (`PipelineSession`).
 */
export class CodeRun {
  private current: CodeRunPhase = 'idle';
  private listeners: ((e: CodeRunEvent) => void)[] = [];
  private session: PipelineSession | null = null;
  private starting: { startup: StartUp; done: Promise<void> } | null = null;
  /** How a Stop or a failure during the start-up asked the run to end, applied once it is built. */
  private endRequested: 'paused' | 'failed' | null = null;
  private ending = false;
  private finished: (() => void) | null = null;
  private limits: RunLimits = {};
  private first = 0;
  /** An error that stays the run's error (the storage went away: later write errors would hide it). */
  private sticky: string | null = null;
  /** Writes the run's history; kept after it stops (a late evaluation is stored too). */
  private writer: HistoryWriter | null = null;
  /** performance.now() when the current (or last) run started. */
  private t0 = 0;

  constructor(private readonly deps: CodeRunDeps) {}

  get phase(): CodeRunPhase {
    return this.current;
  }

  /** The run's live session (null unless running or stopping). */
  get live(): PipelineSession | null {
    return this.session;
  }

  /** The version this session started from (limits and periodic evaluations count from it). */
  get firstVersion(): number {
    return this.first;
  }

  /** The history writer of the current (or last) run. */
  get history(): HistoryWriter | null {
    return this.writer;
  }

  /** Where the current (or last) run stands: wall seconds since it started, episodes its session played. */
  clock(): { seconds: number; episodes: number } {
    const episodes = this.session?.pipeline.counters.generatedEpisodes ?? 0;
    return { seconds: (performance.now() - this.t0) / 1000, episodes };
  }

  /** Calls `listener` with every event; returns the unsubscribe function. */
  subscribe(listener: (e: CodeRunEvent) => void): () => void {
    this.listeners = [...this.listeners, listener];
    return () => (this.listeners = this.listeners.filter((l) => l !== listener));
  }

  /** Whether a run is in progress (starting, running or stopping). */
  get active(): boolean {
    return this.current === 'starting' || this.current === 'running' || this.current === 'stopping';
  }

  /** Starts a new run with `settings`; resolves when it ends (stopped, finished or failed). */
  start(settings: RunConfig, limits: RunLimits = {}): Promise<void> {
    return this.begin(limits, { settings });
  }

  /** Resumes a stored run from its newest version; resolves when it ends. */
  resume(runId: string, limits: RunLimits = {}): Promise<void> {
    return this.begin(limits, { resumeId: runId });
  }

  /** Stops the run: scheduling ends, the trainer's step in progress is published, the run is paused (resumable). */
  stop(): Promise<void> {
    return this.end('paused');
  }

  /**
   * Pause: the running run holds at its next boundary (no new rollout job, no new batch; the work
   * in progress finishes, the trainer's step publishes), keeping its session, workers and trainer.
   * False when no run is running.
   */
  pause(): boolean {
    return this.holding((h) => h.pause());
  }

  /** Lets a paused (or stepping) run go on as before; false when no run is running. */
  unpause(): boolean {
    return this.holding((h) => h.resume());
  }

  /** Step: the run trains exactly one more version, then holds (a running run pauses first). */
  step(): boolean {
    return this.holding((h) => h.step());
  }

  /** Where the running run's Pause / Step stand (null unless running). */
  get hold(): HoldView | null {
    return this.current === 'running' ? (this.session?.pipeline.hold.view() ?? null) : null;
  }

  private holding(act: (hold: HoldControl) => unknown): boolean {
    const s = this.session;
    if (this.current !== 'running' || !s || s.pipeline.isStopped) return false;
    return act(s.pipeline.hold) !== false;
  }

  /** Ends the run with `message` as its error (`sticky`: it stays the run's error). */
  fail(message: string, sticky = false): Promise<void> {
    if (sticky) this.sticky = message;
    this.emit({ kind: 'error', message: this.sticky ?? message });
    return this.end('failed');
  }

  private async begin(
    limits: RunLimits,
    what: { settings: RunConfig } | { resumeId: string },
  ): Promise<void> {
    if (this.active) return;
    if (!this.deps.trainer.lease.acquire('run')) {
      const label = statusOf(this.deps.trainer.lease.state);
      this.emit({ kind: 'error', message: `the trainer is ${label}; wait until it is ready` });
      return;
    }
    this.limits = limits;
    this.t0 = performance.now();
    this.sticky = null; // a new run opens the storage again: its own errors are its own
    const done = new Promise<void>((resolve) => (this.finished = resolve));
    this.setPhase('starting');
    // A dead trainer never answers: a crash during the start-up gives it up (and what it would
    // build next is not built). Once the session exists, it restarts the trainer from the store
    // too; the stop below then waits for that restart.
    const startup = new StartUp();
    let crashed = false;
    const offCrash = this.deps.trainer.lease.takeCrashes((m) => {
      crashed = true;
      startup.abandon(new Error(`the trainer worker crashed while the run started: ${m}`));
    });
    this.starting = { startup, done };
    let failed = false;
    try {
      await startup.run((su) => this.startUp(what, done, su));
    } catch (err) {
      this.emit({ kind: 'error', message: errorMessage(err) });
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
      // the new trainer is up or failed to start (the bridge bounds each call of its start).
      if ((crashed || startup.gaveUpWaitingOn === TRAINER) && !this.session)
        await this.deps.trainer.lease.restart();
      await this.end(requested ?? 'failed', failed || requested === 'failed'); // a Stop's own status, even where the start-up was given up
    } else this.setPhase('running');
    return done;
  }

  /**
   * What `begin` does until the run trains: prepare the trainer, build the session, start it.
   * Every await is a `su.step`: a start-up given up meanwhile builds nothing more.
   */
  private async startUp(
    what: { settings: RunConfig } | { resumeId: string },
    done: Promise<void>,
    su: StartUp,
  ): Promise<void> {
    const api = this.deps.trainer.lease.api;
    const db = await su.step(STORAGE, this.deps.database());
    let session: PipelineSession;
    if ('resumeId' in what) {
      const resumeId = what.resumeId;
      // Held until the run ends, from before the run is read: two tabs never train (and store)
      // one run, and no tab deletes it meanwhile.
      if (!(await su.step("the run's lock", this.deps.hold(resumeId, done))))
        throw new Error(`run ${resumeId} is training in another tab of this page: stop it there first`);
      this.emit({ kind: 'resuming', runId: resumeId });
      const record = await su.step(STORAGE, db.get('runs', resumeId));
      if (!record) throw new Error(`no stored run ${resumeId}`);
      if (runKind(record) !== 'code')
        throw new Error(
          `run ${resumeId} is ${runKind(record) === 'custom' ? "a custom environment's training" : "the trainer panel's saved weights"}: the run panel does not resume it`,
        );
      const settings = runConfigFromJson(record.config);
      // A resumed run restores its own versions: where it started (perhaps a built-in base this
      // build no longer ships) only labels it.
      validateRunConfig({ ...settings, policy: { ...settings.policy, startFrom: null } });
      this.emit({ kind: 'settings', runId: resumeId, settings });
      const point = await su.step(TRAINER, api.resumeRun(runInit(resumeId, settings), settings));
      if (point.notice) this.emit({ kind: 'notice', message: point.notice });
      const [unconsumed, last, past] = await su.step(
        STORAGE,
        Promise.all([listUnconsumed(db, resumeId), lastKeys(db, resumeId), loadHistory(db, resumeId)]),
      );
      this.emit({ kind: 'resumed', runId: resumeId, history: past });
      session = this.build(await this.sessionClass(su), resumeId, settings, {
        version: point.version,
        ...resumeKeys(point.run.progress, unconsumed, last),
        ...replayFromRecords(unconsumed),
        progress: point.run.progress,
        hindsight: past.hindsight,
      });
      // The timeline goes on from the run's stored history.
      this.first = point.version;
      session.log.push(...past.events);
      this.writer = this.historyWriter(db, resumeId, past.nextEventSeq, session.log.pushed);
    } else {
      const settings = what.settings;
      validateRunConfig(settings);
      const runId = (this.deps.newRunId ?? (() => newRunId()))();
      void this.deps.hold(runId, done);
      await su.step(TRAINER, api.resetPolicy(settings));
      session = this.build(await this.sessionClass(su), runId, settings, null); // from here on, a failure stops it
      this.first = 0;
      this.writer = this.historyWriter(db, runId, 0, 0);
      await su.step(TRAINER, api.startRun(session.runInit, session.progress()));
    }
    this.emit({ kind: 'session', session });
    await su.step('the rollout workers', session.start()); // a session stopped meanwhile starts no worker
  }

  /** The session's code, and what the view needs before it hears of one (both fetched as the page starts). */
  private async sessionClass(su: StartUp): Promise<typeof PipelineSession> {
    const [code] = await su.step(PIPELINE, Promise.all([loadSession(), this.deps.beforeSession?.()]));
    return code.PipelineSession;
  }

  private build(
    Session: typeof PipelineSession,
    runId: string,
    settings: RunConfig,
    restored: Restored | null,
  ): PipelineSession {
    const session = new Session(
      runId,
      settings,
      this.deps.trainer,
      {
        onStep: (r) => this.stepped(r),
        onError: (m) => void this.fail(m),
        onNotice: (m) => this.emit({ kind: 'notice', message: m }),
        onHold: (hold) => this.emit({ kind: 'hold', hold }),
      },
      restored,
      this.deps.createRollout,
    );
    this.session = session;
    return session;
  }

  private stepped(r: StepReport): void {
    this.writer?.step(r); // the step published at Stop too, after the session is let go
    this.emit({ kind: 'step', report: r });
    const s = this.session;
    if (!s) return;
    if (r.version % POOL_EVERY === 0) this.writer?.hindsight(s.source.hindsight.snapshot());
    const l = this.limits;
    if (
      (l.maxIterations !== undefined && r.version - this.first >= l.maxIterations) ||
      (l.maxTrainedEpisodes !== undefined && s.pipeline.counters.trainedEpisodes >= l.maxTrainedEpisodes)
    ) {
      this.emit({ kind: 'finishing' });
      void this.end('paused');
    }
  }

  /** Stores the run's steps, evaluations and timeline events as they come (DESIGN §7). */
  private historyWriter(db: LabDB, runId: string, nextEventSeq: number, pushed: number): HistoryWriter {
    return new HistoryWriter(
      db,
      runId,
      { nextEventSeq, pushed },
      {
        onEvict: (e) => this.emit({ kind: 'notice', message: evictionNotice(e, "the run's history") }),
        onError: (m) => this.emit({ kind: 'notice', message: m }),
      },
    );
  }

  private async end(status: 'paused' | 'failed', failed = status === 'failed'): Promise<void> {
    if (this.starting) {
      // The start-up is in progress: it ends the run as soon as it has built what it stops, or
      // once it is given up for not ending in time.
      this.endRequested = this.endRequested === 'failed' ? 'failed' : status;
      this.setPhase('stopping');
      this.starting.startup.stopWithin(STOP_STARTUP_MS);
      return this.starting.done;
    }
    const s = this.session;
    if (this.ending || (!s && !this.active)) return;
    this.ending = true;
    this.session = null;
    this.emit({ kind: 'session', session: null }); // the view stops reading it
    this.setPhase('stopping');
    if (s) {
      await s.stop(status);
      await this.deps.afterStop?.(s).catch(() => undefined); // the final figures, after the last step
      this.writer?.hindsight(s.source.hindsight.snapshot()); // what Resume trains on again
      await this.writer?.settled(); // a reload right after Stop finds the whole history
    }
    this.deps.trainer.lease.release('run');
    this.ending = false;
    this.setPhase(failed ? 'failed' : 'idle');
    // The list has the run's newest version before a Stop resolves: a "start from" picked right
    // after it took the version listed at the run's start (0).
    if (this.deps.afterEnd)
      await settlesWithin(
        this.deps.afterEnd().catch(() => undefined),
        AFTER_END_MS,
      );
    this.finished?.();
    this.finished = null;
  }

  private setPhase(phase: CodeRunPhase): void {
    if (phase === this.current) return;
    this.current = phase;
    this.emit({ kind: 'state', phase });
  }

  private emit(e: CodeRunEvent): void {
    for (const l of this.listeners) l(e);
  }
}
