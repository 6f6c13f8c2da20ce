import { errorMessage } from '../errors';
import { lazyModule } from '../lazy';
import type { CustomEnvSpec } from '../custom/env';
import type { PipelineCounters } from '../pipeline/controller';
import type { TimelineEvent } from '../pipeline/events';
import type { StepReport } from '../pipeline/types';
import { CUSTOM_BASELINE_EPISODES, validateCustomTrain, type CustomTrainConfig } from '../custom/config';
import { settlesWithin } from './failure-signal';
import type { ResumeStart } from './custom-catalog';
import type { CustomTrainerApi } from './custom-ports';
import type { LeasedTrainer } from './trainer-lease';
import type { CustomSession, SessionDeps, SessionHooks } from './custom-session';
import { STOPPED_EARLY, STOPPED_NOW } from './custom-stop';

/** Returns of the random, untrained and trained policies on a custom environment. */
export interface CustomEnvReport {
  spec: CustomEnvSpec;
  /** Updates trained (fewer than asked when stopped). */
  iterations: number;
  randomReturn: number;
  /** null: a resumed training of an older build, which did not store it. */
  untrainedReturn: number | null;
  trainedReturn: number;
}

/** Where a training starts: a fresh policy, or a stored training's newest version (a resume). */
export type CustomStart = { kind: 'new'; config: CustomTrainConfig; code: string } | ResumeStart;

/**
 * Where a custom run stands: idle (or failed, after an error) between trainings; starting while
 * it takes its lock and sets up; running while the pipeline trains; stopping once Stop is asked.
 */
export type CustomRunState = 'idle' | 'starting' | 'running' | 'stopping' | 'failed';

/** What a custom run tells its view. */
export type CustomRunEvent =
  | { type: 'state'; state: CustomRunState }
  /** A training begins: the view of the previous one is cleared; it goes to `asked` iterations. */
  | { type: 'begin'; asked: number }
  /** What the training is doing now (null: none runs). */
  | { type: 'phase'; phase: string | null }
  /** The version a resume starts from. */
  | { type: 'start-version'; version: number }
  /** An update published a version. */
  | { type: 'step'; report: StepReport; counters: PipelineCounters; timeline: readonly TimelineEvent[] }
  | { type: 'counters'; counters: PipelineCounters }
  /** The training's spans and marks for the timeline, at its end. */
  | { type: 'timeline'; events: readonly TimelineEvent[] }
  | { type: 'report'; report: CustomEnvReport }
  /** `unlessShown`: only when no error is shown (a later error does not hide the first). */
  | { type: 'error'; message: string; unlessShown?: boolean }
  /** Something to know that is not an error (a Stop before the first update). */
  | { type: 'notice'; message: string };

/** The trainer worker's states (`TrainerState`'s). */
export type TrainerStatusName = 'idle' | 'starting' | 'ready' | 'training' | 'busy' | 'error';

/** The trainer worker as a custom run holds it (`TrainerState` in the page). */
export interface CustomTrainerPort {
  /** Its state as the page names it (derived from the lease). */
  readonly status: TrainerStatusName;
  /** The run trains only while it holds the lease (`acquire('custom')`); it lets go as it ends. */
  readonly lease: Pick<LeasedTrainer<unknown>, 'state' | 'acquire' | 'release'>;
  readonly api: CustomTrainerApi;
  /** Takes over crash handling while it trains; returns the release function. */
  onCrash(listener: (message: string) => void): () => void;
  /** Subscribes to the trainer's timeline events (its updates and stores); returns the unsubscribe function. */
  onEvents(listener: (events: TimelineEvent[]) => void): () => void;
  restart(): Promise<void>;
}

/** What a custom run needs: the trainer, rollout workers, the catalog, and the table to refresh. */
export interface CustomRunDeps extends SessionDeps {
  /** A new training's run id. */
  newRunId(): string;
  /** Reads the stored trainings again for the table (this run's `runId` is the current one). */
  refresh(): Promise<void>;
}

/** How long a trainer has to answer after "Stop now" before it is taken to hang and restarted, ms. */
const TRAINER_ANSWER_MS = 2_000;

/**
 * A training's session and what it assembles (the pipeline, the environment's workload, the
 * rollout workers): a chunk of its own, apart from the page's main bundle. The page fetches it as
 * it starts (`CustomEnvState`), so Train finds it loaded.
 */
export const loadCustomSession = lazyModule(() => import('./custom-session'));

/**
 * Custom-environment trainings, one at a time, through the same asynchronous pipeline as the
 * code-writing policy: a pool of rollout workers plays groups of episodes in their own sandboxed
 * copy of the environment with the newest MLP version they adopted, and the trainer worker updates
 * the MLP with the decoupled PPO loss, stores the next version and announces it to the workers.
 * Its view subscribes to its events.
 */
export class CustomRun {
  #state: CustomRunState = 'idle';
  #listeners: ((e: CustomRunEvent) => void)[] = [];
  /** The run the training in progress stores its versions in (null: none, or not known yet). */
  #runId: string | null = null;
  /** The stored training the one in progress resumed (null: a fresh one). */
  #resumedFrom: ResumeStart | null = null;
  /** The training in progress (set while it can be ended). */
  #session: CustomSession | null = null;
  /** The training "Stop now" cuts (set while it runs its steps). */
  #cut: CustomSession | null = null;
  /** A "Stop now" asked while the training already wound down (its end waits on the trainer). */
  #lateStopNow: string | null = null;
  /** Why the training in progress failed (null while it has not): what its end stores. */
  #failure: string | null = null;
  #phase: string | null = null;
  /** Trainings started; the newest's number (a late report of an earlier one is ignored). */
  #started = 0;

  constructor(private readonly deps: CustomRunDeps) {}

  get state(): CustomRunState {
    return this.#state;
  }

  /** A training is in progress (starting, running or stopping). */
  get active(): boolean {
    return this.#state === 'starting' || this.#state === 'running' || this.#state === 'stopping';
  }

  /** The run this page trains now: Delete refuses it, and the table shows it as running. */
  get runId(): string | null {
    return this.#runId;
  }

  /** Calls `listener` with every event; returns the unsubscribe function. */
  subscribe(listener: (e: CustomRunEvent) => void): () => void {
    this.#listeners = [...this.#listeners, listener];
    return () => (this.#listeners = this.#listeners.filter((l) => l !== listener));
  }

  /** The training in progress fails with `message` (shown; its run is stored as failed). */
  fail(message: string): void {
    this.#failure ??= message;
    this.emit({ type: 'error', message });
    this.#session?.end();
  }

  /**
   * Ends training after the update in progress; the report then covers the updates done. Asked
   * again while that winds down ("Stop now"), ends at once: a worker that died without a word or
   * hangs never answers, and the run would wait for it for ever.
   */
  stop(): void {
    if (!this.active) return;
    if (this.#state === 'stopping') {
      if (this.#cut) this.#cut.endNow(this.#phase ?? 'training');
      else this.#lateStopNow ??= 'finishing';
      return;
    }
    this.setState('stopping');
    this.#session?.end();
  }

  /** Trains from `requested` until its iterations, a Stop or a failure; resolves when it has ended. */
  async train(requested: CustomStart): Promise<void> {
    if (this.active) return;
    const { trainer } = this.deps;
    if (!trainer.lease.acquire('custom')) {
      this.emit({ type: 'error', message: `the trainer is ${trainer.status}; wait until it is ready` });
      return;
    }
    this.setState('starting');
    const runId = requested.kind === 'resume' ? requested.runId : this.deps.newRunId();
    let release = (): void => undefined;
    const trained = new Promise<void>((resolve) => (release = resolve));
    const acquired = await this.acquire(requested, runId, trained, release);
    if (!acquired) return;
    const session = await this.begin(runId, acquired.start, acquired.Session, release);
    if (!session) return;
    try {
      await session.run();
    } catch (err) {
      if (err !== STOPPED_NOW) this.fail(errorMessage(err));
    } finally {
      await this.finish(session, release);
    }
  }

  private emit(e: CustomRunEvent): void {
    for (const l of this.#listeners) l(e);
  }

  private setState(state: CustomRunState): void {
    this.#state = state;
    this.emit({ type: 'state', state });
  }

  private setPhase(phase: string | null): void {
    this.#phase = phase;
    this.emit({ type: 'phase', phase });
  }

  /** Gives up before anything is stored or started: the lock goes, the trainer is ready again. */
  private async abandon(
    release: () => void,
    error: string | null,
    notice: string | null = null,
  ): Promise<void> {
    release();
    this.#runId = null;
    this.#resumedFrom = null;
    this.setState(error ? 'failed' : 'idle');
    this.deps.trainer.lease.release('custom');
    if (error) this.emit({ type: 'error', message: error });
    if (notice) this.emit({ type: 'notice', message: notice });
    await this.deps.refresh().catch(() => undefined);
  }

  /**
   * Step 1: the training's lock (held until `trained` settles: another tab's table says it trains
   * elsewhere, and cannot resume it too), a resume as stored now, valid settings, and the session's
   * code (`loadCustomSession`). Null: given up.
   */
  private async acquire(
    requested: CustomStart,
    runId: string,
    trained: Promise<void>,
    release: () => void,
  ): Promise<{ start: CustomStart; Session: typeof CustomSession } | null> {
    const { catalog } = this.deps;
    if (!(await catalog.hold(runId, trained))) {
      await this.abandon(release, 'another tab of this page is training it now: it cannot be resumed here');
      return null;
    }
    // A resume goes by the training as stored now: the table may be older than another tab's work.
    let start = requested;
    if (requested.kind === 'resume') {
      try {
        start = await catalog.show(runId);
      } catch (err) {
        await this.abandon(release, `the training cannot be resumed: ${errorMessage(err)}`);
        return null;
      }
    }
    try {
      validateCustomTrain(start.config);
    } catch (err) {
      const why = errorMessage(err);
      await this.abandon(
        release,
        start.kind === 'resume' ? `the stored training cannot be resumed: ${why}` : why,
      );
      return null;
    }
    let Session: typeof CustomSession;
    try {
      Session = (await loadCustomSession()).CustomSession;
    } catch (err) {
      await this.abandon(release, `the training could not be set up: ${errorMessage(err)}`);
      return null;
    }
    if (this.#state === 'stopping') {
      await this.abandon(release, null, STOPPED_EARLY);
      return null;
    }
    return { start, Session };
  }

  /** Step 2: the view is cleared, and the training's workers start. Null: they could not. */
  private async begin(
    runId: string,
    start: CustomStart,
    Session: typeof CustomSession,
    release: () => void,
  ): Promise<CustomSession | null> {
    if (start.kind === 'resume') {
      // From here on it is this page's: Delete refuses it, and its end restores what a resume
      // that trained nothing must leave.
      this.#runId = runId;
      this.#resumedFrom = start;
    }
    this.emit({ type: 'begin', asked: start.config.iterations });
    const id = ++this.#started;
    this.#failure = null;
    this.setPhase(
      `setting up: opening the environment and measuring random actions (${CUSTOM_BASELINE_EPISODES} episodes of up to spec.maxSteps steps each: a long maxSteps takes a while)`,
    );
    const current = () => id === this.#started;
    const hooks: SessionHooks = {
      event: (e) => {
        if (!current()) return; // a late report of an earlier training
        if (e.type !== 'phase') this.emit(e);
        else if (this.active) this.setPhase(e.phase);
      },
      fail: (message) => {
        if (current()) this.fail(message);
      },
      failed: () => this.#failure !== null,
      stopping: () => this.#state === 'stopping',
      claimed: () => (this.#runId = runId),
      running: () => {
        if (this.#state === 'starting') this.setState('running');
      },
      stored: () => void this.deps.refresh().catch(() => undefined),
    };
    try {
      this.#session = new Session(runId, start, this.deps, hooks);
    } catch (err) {
      await this.abandon(release, `the rollout workers could not start: ${errorMessage(err)}`);
      return null;
    }
    this.#cut = this.#session;
    return this.#session;
  }

  /**
   * Step 3: the end. Stores how the training ended, lets go of its lock, workers and trainer,
   * and says so after a "Stop now" (a trainer that does not answer then is what hung: it starts
   * again).
   */
  private async finish(session: CustomSession, release: () => void): Promise<void> {
    this.#cut = null;
    await session.close();
    const reached = session.reached;
    await this.settle(reached > session.startVersion, session);
    release();
    session.dispose();
    const { trainer } = this.deps;
    // The lease goes back with a trainer that answers: one that died without a word meanwhile
    // (nothing of the training's end needs it) starts again.
    const hung =
      trainer.lease.state.holder === 'custom' &&
      !(await settlesWithin(trainer.api.stats(), TRAINER_ANSWER_MS));
    const stoppedNow = session.stoppedNow ?? this.#lateStopNow;
    this.#lateStopNow = null;
    if (stoppedNow !== null && this.#failure === null) {
      const asked = session.start.config.iterations;
      const stored =
        reached > session.startVersion
          ? `The training is stored up to version ${reached}${reached < asked ? ': Resume goes on from there' : ''}.`
          : 'Nothing was trained.';
      const restarted = hung ? ', and the trainer worker, which did not answer, starts again' : '';
      this.emit({
        type: 'notice',
        message: `Stopped at once while ${stoppedNow}: that was given up${restarted}. ${stored}`,
      });
    } else if (hung) {
      this.emit({
        type: 'notice',
        message: 'The trainer worker did not answer as the training ended: it starts again.',
      });
    }
    this.#session = null;
    this.emit({ type: 'timeline', events: [...session.log.events] });
    this.setState(this.#failure === null ? 'idle' : 'failed');
    this.setPhase(null);
    if (hung) void trainer.restart();
    else trainer.lease.release('custom');
  }

  /** Stores how the training ended and refreshes the table. */
  private async settle(trained: boolean, session: CustomSession): Promise<void> {
    const runId = this.#runId;
    const resumed = this.#resumedFrom;
    this.#runId = null;
    this.#resumedFrom = null;
    if (!runId) return;
    try {
      const end = { trained, failure: this.#failure, progress: session.progress() };
      await this.deps.catalog.settle(
        runId,
        resumed,
        session.result ? { ...end, result: session.result } : end,
      );
      await this.deps.refresh();
    } catch (err) {
      this.emit({
        type: 'error',
        message: `the training's end could not be stored: ${errorMessage(err)}`,
        unlessShown: true,
      });
    }
  }
}
