import { errorMessage } from '../errors';
import * as Comlink from 'comlink';
import { RolloutBridge } from '../bridge/rollout-bridge';
import { CARTPOLE_JS, type CustomEnvSpec } from '../env/custom';
import { Pipeline, runCounters, type PipelineCounters } from '../pipeline/controller';
import { CustomJobSource, customPipelineConfig, type CustomTrajectory } from '../pipeline/custom-workload';
import { EventLog, now, type TimelineEvent } from '../pipeline/events';
import type { RolloutPort, StepReport, TrainOutcome } from '../pipeline/types';
import {
  CUSTOM_BASELINE_EPISODES,
  CUSTOM_MEASURE_EPISODES,
  DEFAULT_CUSTOM_TRAIN,
  validateCustomTrain,
  type CustomTrainConfig,
} from '../rl/custom-config';
import type { CustomBatch } from '../rl/custom-trainer';
import { metricNumbers } from '../policy/metrics';
import {
  LabDbConnection,
  type CustomRunResult,
  type LabDB,
  type RunProgress,
  type RunRecord,
} from '../storage/db';
import { evictionNotice } from '../storage/quota';
import { deleteRun, listRuns, setRunStatus } from '../storage/weights-store';
import type { TrainerState } from './trainer-state.svelte';
import { failureSignal, settlesWithin } from './failure-signal';
import { newRunId } from './pipeline-session';
import { count } from './plural';
import { DRAFTS } from './draft';
import { TabLocks } from './tab-locks';

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
type Start =
  | { kind: 'new'; config: CustomTrainConfig; code: string }
  | {
      kind: 'resume';
      config: CustomTrainConfig;
      code: string;
      runId: string;
      /** Its status before the resume: what it keeps when the resume trains nothing. */
      status: RunRecord['status'];
      /** Seconds it had trained. */
      seconds: number;
      /** Its newest stored version as listed (the seeds of the resumed part are offset by it). */
      from: number;
      /** The next job id it gives (job seeds go on, not over again). */
      nextJobId: number;
      /** Its pipeline counters so far (the resumed part's are added). */
      counters: Record<string, number>;
      /** Its stored returns: the baselines it reports, and what it keeps if the resume trains nothing. */
      baselines?: CustomRunResult;
    };

type ResumeStart = Extract<Start, { kind: 'resume' }>;

type Emit = (e: TimelineEvent) => void;

/** How long the end of a training waits for the trainer to finish what it was storing, ms. */
const SETTLE_WAIT_MS = 2_000;

/** What a setup step gives when Stop came first. */
const STOPPED = Symbol('stopped');
/** What "Stop now" rejects the training's waits with (not a failure: the user ended it). */
const STOPPED_NOW = new Error('stopped at once');
/** How long a trainer has to answer after "Stop now" before it is taken to hang and restarted, ms. */
const TRAINER_ANSWER_MS = 2_000;

/** A copy of a pipeline's counters for the panel. */
const countersOf = (p: Pipeline<CustomBatch, CustomTrajectory>): PipelineCounters => ({
  ...p.counters,
  stalenessHistogram: { ...p.counters.stalenessHistogram },
});

/** A stored training of the panel (a run of kind 'custom'), for the comparison table. */
export interface CustomTraining {
  runId: string;
  startedAt: number;
  /**
   * finished: measured after its last update (asked for, or a Stop); failed: ended by an error (a
   * crashed worker too); interrupted: the page closed while it trained; running: this page's, now;
   * elsewhere: another tab of the page trains it now (it holds the training's lock).
   */
  status: 'running' | 'elsewhere' | 'finished' | 'failed' | 'interrupted';
  eta: number;
  workers: number;
  /** Versions it published (fewer than asked after a Stop or an error). */
  iterations: number;
  /** Versions it was asked for. */
  asked: number;
  /** Returns measured at its end (absent when it did not finish). */
  result?: CustomRunResult;
  /** The environment's code it trained on. */
  code: string;
  /** Its settings as stored (what a resume trains with). */
  config: Record<string, unknown>;
  /** Seconds it trained. */
  seconds: number;
  /** The next job id of its pipeline (0 when not stored). */
  nextJobId: number;
  /** Its pipeline's counters, over all its sessions. */
  counters: Record<string, number>;
  /** It can go on from its newest version: stopped short of what it was asked, and not running. */
  resumable: boolean;
}

/** The Web Lock a tab holds while it trains a custom run (other tabs see it held). */
export const trainingLock = (runId: string): string => `sandbox-rl-lab/custom-training/${runId}`;

/**
 * A stored custom run as a row of the trainings table (`current`: the run this page trains now;
 * `locked`: the training locks other tabs hold).
 */
export function trainingOf(
  r: RunRecord,
  current: string | null,
  locked: readonly string[] = [],
): CustomTraining {
  const c = r.config;
  const num = (v: unknown) => (typeof v === 'number' ? v : NaN);
  const status: CustomTraining['status'] =
    r.status === 'failed'
      ? 'failed'
      : r.status === 'running' || r.status === 'created'
        ? r.id === current
          ? 'running'
          : locked.includes(trainingLock(r.id))
            ? 'elsewhere'
            : 'interrupted'
        : 'finished';
  const iterations = Math.max(0, r.latestVersion);
  const asked = num(c.iterations);
  const code = typeof c.code === 'string' ? c.code : '';
  return {
    runId: r.id,
    startedAt: r.createdAt,
    status,
    eta: num(c.eta),
    workers: num(c.workers),
    iterations,
    asked,
    ...(r.result ? { result: r.result } : {}),
    code,
    config: c,
    seconds: r.progress?.seconds ?? 0,
    nextJobId: r.progress?.nextJobId ?? 0,
    counters: { ...r.progress?.counters },
    resumable:
      status !== 'running' && status !== 'elsewhere' && r.latestVersion >= 0 && iterations < asked && !!code,
  };
}

/** How a stored training resumes: its settings and code as stored, and where it stands. */
function resumeStartOf(t: CustomTraining): ResumeStart {
  const { code: _code, ...stored } = t.config;
  return {
    kind: 'resume',
    config: { ...DEFAULT_CUSTOM_TRAIN, ...stored } as CustomTrainConfig,
    code: t.code,
    runId: t.runId,
    status: t.status === 'failed' ? 'failed' : t.status === 'finished' ? 'finished' : 'running',
    seconds: t.seconds,
    from: t.iterations,
    nextJobId: t.nextJobId,
    counters: t.counters,
    ...(t.result ? { baselines: t.result } : {}),
  };
}

/** The number fields of a custom training's progress (its counters and seconds). */
function progressOf(
  p: Pipeline<CustomBatch, CustomTrajectory>,
  seconds: number,
  before: Readonly<Record<string, number>>,
): RunProgress {
  return { counters: runCounters(before, p.counters), seconds, nextJobId: p.keys.nextJobId };
}

/**
 * UI state of the custom JS environment panel. Training goes through the same asynchronous
 * pipeline as the code-writing policy (`Pipeline`: staleness admission, stale drops, interrupts):
 * rollout workers play groups of episodes in their own sandboxed copy of the environment with the
 * newest MLP version they adopted, and the trainer worker updates the MLP with the decoupled PPO
 * loss and publishes the next version to every worker.
 */
export class CustomEnvState {
  #code = $state(DRAFTS.envCode.load(CARTPOLE_JS));
  /** The environment code in the editor (kept across reloads: `DRAFTS.envCode`). */
  get code(): string {
    return this.#code;
  }
  set code(text: string) {
    this.#code = text;
    DRAFTS.envCode.save(text);
  }
  iterations = $state(DEFAULT_CUSTOM_TRAIN.iterations);
  /** Max staleness η: 0 alternates rollout and training; ≥ 1 lets the workers play ahead. */
  eta = $state(DEFAULT_CUSTOM_TRAIN.eta);
  workers = $state(DEFAULT_CUSTOM_TRAIN.workers);
  training = $state(false);
  /** The training in progress: the version it started from (a resume's) and the iterations it goes to. */
  startVersion = $state(0);
  asked = $state(DEFAULT_CUSTOM_TRAIN.iterations);
  /** One report per update: the version it published and the episodes it trained on. */
  history = $state.raw<StepReport[]>([]);
  report = $state.raw<CustomEnvReport | null>(null);
  error = $state<string | null>(null);
  /** The pipeline's spans and marks for the timeline, newest training only. */
  events = $state.raw<readonly TimelineEvent[]>([]);
  /** The newest training's pipeline counters (interrupts, stale drops, staleness). */
  counters = $state.raw<PipelineCounters | null>(null);
  /** Stop asked: the update in progress publishes, then the trained policy is measured. */
  stopping = $state(false);
  /** What the training is doing now (null when none runs): the panel shows it. */
  phase = $state<string | null>(null);
  /** Something to know that is not an error (a Stop before the first update). */
  notice = $state<string | null>(null);
  /** The trainings stored in this browser, oldest first: each starts from a fresh policy, so they compare. */
  trainings = $state.raw<CustomTraining[]>([]);

  /** Ends the training in progress (set while one runs). */
  private end: (() => void) | null = null;
  /** Ends it at once, waiting for no worker ("Stop now"; set while one runs). */
  private endNow: (() => void) | null = null;
  /** The run the training in progress stores its versions in. */
  private runId: string | null = null;
  /** The stored training the one in progress resumed (null: a fresh one). */
  private resumedFrom: ResumeStart | null = null;
  /** The training locks: this page's own trainings are not "elsewhere". */
  private readonly locks = new TabLocks('sandbox-rl-lab:custom-locks');
  /** Trainings started on this page; the newest's number (a late report of an earlier one is ignored). */
  private trainingsStarted = 0;
  /** Why the training in progress failed (null while it has not): what `settle` stores. */
  private failure: string | null = null;
  private readonly db = new LabDbConnection({
    // A training cannot go on without its storage: it stops, saying why.
    closed: (message) => {
      if (this.training) this.fail(message);
    },
  });

  constructor(private readonly trainer: TrainerState) {
    // Another tab started or ended a training: the table says so without a reload.
    this.locks.onElsewhereChange(() => void this.loadTrainings().catch(() => undefined));
  }

  private database(): Promise<LabDB> {
    return this.db.get();
  }

  /** The training in progress fails with `message` (shown; its run is stored as failed). */
  private fail(message: string): void {
    this.failure ??= message;
    this.error = message;
    this.end?.();
  }

  /** Reads the stored trainings for the table, oldest first. */
  async loadTrainings(): Promise<void> {
    const runs = await listRuns(await this.database(), 'custom');
    // Best effort: without locks, another tab's training reads as interrupted.
    const locked = await this.locks.heldElsewhere();
    this.trainings = runs
      .sort((a, b) => a.createdAt - b.createdAt)
      .map((r) => trainingOf(r, this.runId, locked));
  }

  /** Deletes a stored training and its versions (not the one training now). */
  async deleteTraining(runId: string): Promise<void> {
    const row = this.trainings.find((t) => t.runId === runId);
    if (runId === this.runId || row?.status === 'elsewhere') {
      this.notice = 'This training is in progress: stop it before deleting it.';
      return;
    }
    // Deleted under the training's lock: a tab whose table is stale cannot delete a training
    // another tab has resumed since, and no tab resumes it meanwhile.
    let release = () => {};
    const deleted = new Promise<void>((resolve) => (release = resolve));
    try {
      if (!(await this.locks.hold(trainingLock(runId), deleted))) {
        this.notice = 'This training is in progress in another tab: stop it there before deleting it.';
        await this.loadTrainings();
        return;
      }
      const n = this.trainings.findIndex((t) => t.runId === runId) + 1;
      const gone = await deleteRun(await this.database(), runId);
      this.notice = `Deleted training ${n} and its ${count(gone.versions, 'stored version')}.`;
      await this.loadTrainings();
    } catch (err) {
      this.error = `the training could not be deleted: ${errorMessage(err)}`;
    } finally {
      release();
    }
  }

  /** Puts a stored training's environment code back in the editor (what is there now is replaced). */
  useCode(runId: string): void {
    const i = this.trainings.findIndex((t) => t.runId === runId);
    const t = this.trainings[i];
    if (!t || this.training) return;
    this.code = t.code;
    this.notice = `The editor now holds the code training ${i + 1} trained on.`;
  }

  /** The trainer worker's state: the panel trains only while it is ready (a run may hold it). */
  get trainerStatus(): string {
    return this.trainer.status;
  }

  /**
   * Ends training after the update in progress; the report then covers the updates done. Pressed
   * again while that winds down ("Stop now"), ends at once: a worker that died without a word or
   * hangs never answers, and the panel would wait for it for ever.
   */
  stop(): void {
    if (!this.training) return;
    if (this.stopping) {
      this.endNow?.();
      return;
    }
    this.stopping = true;
    this.end?.();
  }

  /** Trains a fresh policy on the editor's code with the panel's settings. */
  train(): Promise<void> {
    const config: CustomTrainConfig = {
      ...DEFAULT_CUSTOM_TRAIN,
      iterations: this.iterations,
      eta: this.eta,
      workers: this.workers,
    };
    // The code as it is now: edits during the training apply to the next one.
    return this.run({ kind: 'new', config, code: this.code });
  }

  /**
   * Goes on with a stored training from its newest version (its weights and Adam's state), with
   * its own code and settings, up to the iterations it was asked for. The episodes it had played
   * but not trained on are not stored for a custom environment: the resumed part plays new ones.
   */
  resume(runId: string): Promise<void> {
    const t = this.trainings.find((x) => x.runId === runId);
    if (!t || this.training) return Promise.resolve();
    if (!t.resumable) {
      this.notice = `Training ${this.trainings.indexOf(t) + 1} cannot be resumed (${t.status}, ${t.iterations} of ${t.asked} iterations).`;
      return Promise.resolve();
    }
    return this.run(resumeStartOf(t));
  }

  /** The resume of a training as stored now, read under its lock; throws when it cannot be resumed. */
  private async storedResume(runId: string): Promise<ResumeStart> {
    const record = await (await this.database()).get('runs', runId);
    if (!record) throw new Error('it is no longer stored (deleted?)');
    const t = trainingOf(record, null);
    if (!t.resumable) throw new Error(`it is ${t.status}, ${t.iterations} of ${t.asked} iterations`);
    return resumeStartOf(t);
  }

  private async run(requested: Start): Promise<void> {
    if (this.training) return;
    if (this.trainer.status !== 'ready') {
      this.error = `the trainer is ${this.trainer.status}; wait until it is ready`;
      return;
    }
    this.training = true;
    this.stopping = false;
    this.trainer.status = 'busy';
    const runId = requested.kind === 'resume' ? requested.runId : newRunId(undefined, 'custom');
    let release = (): void => undefined;
    const trained = new Promise<void>((resolve) => (release = resolve));
    // Gives up before anything is stored or started: the lock goes, the trainer is ready again.
    const abandon = async (error: string | null, notice: string | null = null): Promise<void> => {
      release();
      this.runId = null;
      this.resumedFrom = null;
      this.training = false;
      this.stopping = false;
      if (this.trainer.status === 'busy') this.trainer.status = 'ready';
      if (error) this.error = error;
      if (notice) this.notice = notice;
      await this.loadTrainings().catch(() => undefined);
    };
    // Held while it trains: another tab's table says it trains elsewhere and cannot resume it too.
    if (!(await this.locks.hold(trainingLock(runId), trained)))
      return abandon('another tab of this page is training it now: it cannot be resumed here');
    // A resume goes by the training as stored now: the table may be older than another tab's work.
    let start: Start = requested;
    if (requested.kind === 'resume') {
      try {
        start = await this.storedResume(runId);
      } catch (err) {
        return abandon(`the training cannot be resumed: ${errorMessage(err)}`);
      }
    }
    const { config, code } = start;
    try {
      validateCustomTrain(config);
    } catch (err) {
      const why = errorMessage(err);
      return abandon(start.kind === 'resume' ? `the stored training cannot be resumed: ${why}` : why);
    }
    if (this.stopping) return abandon(null, 'Stopped before the first update: nothing was trained.');
    if (start.kind === 'resume') {
      // From here on it is this page's: Delete refuses it, and its end restores what a resume
      // that trained nothing must leave.
      this.runId = runId;
      this.resumedFrom = start;
    }
    this.startVersion = 0;
    this.asked = config.iterations;
    const training = ++this.trainingsStarted;
    this.error = null;
    this.failure = null;
    this.report = null;
    this.history = [];
    this.events = [];
    this.counters = null;
    this.notice = null;
    const B = CUSTOM_BASELINE_EPISODES;
    const M = CUSTOM_MEASURE_EPISODES;
    this.phase = `setting up: opening the environment and measuring random actions (${B} episodes of up to spec.maxSteps steps each: a long maxSteps takes a while)`;
    // The phase with an episode counter, which the worker that measures moves after each episode.
    const counted = (what: (done: number) => string) => {
      this.phase = what(0);
      return Comlink.proxy((done: number) => {
        if (this.training) this.phase = what(done);
      });
    };
    const log = new EventLog(5_000);
    const emit: Emit = (e) => log.push(e);
    // A crashed worker never answers the calls waiting on it: every await below races this.
    const crashed = failureSignal();
    const crash = (message: string) => crashed.reject(new Error(message));
    const guard = <T>(p: Promise<T>): Promise<T> => Promise.race([p, crashed.promise]);
    let pipeline: Pipeline<CustomBatch, CustomTrajectory> | null = null;
    // Stop (or a crash) ends the training whenever it comes, setting up included.
    const ended = new Promise<typeof STOPPED>((resolve) => {
      this.end = () => {
        pipeline?.stop();
        resolve(STOPPED);
      };
    });
    // While setting up, Stop does not wait for the workers' baselines: they are ended with them.
    const setup = <T>(p: Promise<T>): Promise<T | typeof STOPPED> => guard(Promise.race([p, ended]));
    let bridges: RolloutBridge[];
    try {
      bridges = Array.from(
        { length: config.workers },
        (_, i) =>
          new RolloutBridge(`rollout-custom-${i}`, (message) => {
            crash(`rollout worker ${i} crashed: ${message}; training stopped`);
            this.end?.();
          }),
      );
    } catch (err) {
      this.end = null;
      return abandon(`the rollout workers could not start: ${errorMessage(err)}`);
    }
    const releaseTrainer = this.trainer.onCrash((message) => {
      crash(`the trainer worker crashed: ${message}; training stopped, and the trainer restarts`);
      this.end?.();
      void this.trainer.restart();
    });
    // "Stop now": what the training waits on is given up (it may never come: a worker gone without a word).
    let stoppedNow: string | null = null;
    this.endNow = () => {
      stoppedNow = this.phase ?? 'training';
      crashed.reject(STOPPED_NOW);
      this.end?.();
    };
    const stoppedEarly = () => {
      this.notice = 'Stopped before the first update: nothing was trained.';
    };
    let t0 = now();
    // A resumed training's seconds go on from what it had trained.
    const seconds = () => (start.kind === 'resume' ? start.seconds : 0) + (now() - t0) / 1000;
    const before = start.kind === 'resume' ? start.counters : {};
    const progress = (): RunProgress =>
      pipeline ? progressOf(pipeline, seconds(), before) : { seconds: seconds() };
    let startVersion = 0;
    let result: CustomRunResult | undefined;
    let initialising: Promise<void> | undefined;
    // A resume's environments and sampling go on from other seeds than its first part's.
    const seedOffset = start.kind === 'resume' ? start.from * config.workers : 0;
    try {
      const opened = await setup(
        Promise.all(
          bridges.map((b, i) =>
            b.api.openCustomEnv(
              code,
              config.seed + seedOffset + i,
              i === 0
                ? counted(
                    (k) =>
                      `setting up: measuring random actions, episode ${k} of ${B} (each up to spec.maxSteps steps)`,
                  )
                : undefined,
            ),
          ),
        ),
      );
      if (opened === STOPPED) return stoppedEarly();
      const [measure] = bridges;
      const [first] = opened;
      if (!measure || !first) throw new Error('no rollout worker');
      const { spec } = first;
      const { keepVersions, milestoneEvery } = config;
      // Known before the trainer creates it: a crash meanwhile still stores how it ended.
      this.runId = runId;
      const runInit = {
        runId,
        name: `custom environment, η ${config.eta}, ${count(config.workers, 'worker')}`,
        config: { ...config, code },
        keepVersions,
        milestoneEvery,
      };
      const mlpArgs = { inputs: spec.observations, hidden: config.hidden, actions: spec.actions };
      // A resume reports the baselines measured when the training began (random actions measured
      // again only when they were not stored).
      let randomReturn = first.randomReturn;
      let untrainedReturn: number | null = null;
      // The untrained policy's return (the version the workers hold), stored with the random
      // actions' as soon as measured, so that a resume after a reload can report them.
      const measureUntrained = async (): Promise<number | typeof STOPPED> => {
        const measured = await setup(
          measure.api.customReturn(
            M,
            false,
            counted(
              (k) =>
                `setting up: measuring the untrained policy, episode ${k} of ${M} (each up to ${spec.maxSteps} steps)`,
            ),
          ),
        );
        if (measured !== STOPPED)
          await guard(this.storeBaselines(runId, { randomReturn, untrainedReturn: measured }));
        return measured;
      };
      if (start.kind === 'resume') {
        const resuming = this.trainer.api.resumeCustom(config, runInit);
        initialising = resuming.then(() => undefined);
        const from = await guard(resuming);
        if (from.args.inputs !== mlpArgs.inputs || from.args.actions !== mlpArgs.actions)
          throw new Error(
            `the stored policy has ${from.args.inputs} inputs and ${from.args.actions} actions, the environment ${mlpArgs.inputs} and ${mlpArgs.actions}: it cannot be resumed on it`,
          );
        startVersion = from.version;
        this.startVersion = startVersion;
        if (startVersion >= config.iterations)
          throw new Error(
            `it has trained its ${config.iterations} iterations already (version ${startVersion}): there is nothing to resume`,
          );
        randomReturn = start.baselines?.randomReturn ?? randomReturn;
        untrainedReturn = start.baselines?.untrainedReturn ?? null;
        // Its trained return is for an older version from now on.
        await guard(
          this.storeBaselines(runId, {
            randomReturn,
            ...(untrainedReturn === null ? {} : { untrainedReturn }),
          }),
        );
        this.loadTrainings().catch(() => undefined);
        t0 = now();
        const snapshot = await guard(this.trainer.api.exportCustomPolicy());
        await guard(Promise.all(bridges.map((b) => b.api.loadCustomPolicy(snapshot, startVersion))));
        if (untrainedReturn === null && startVersion === 0) {
          // Closed before it measured the untrained policy: version 0 is that policy.
          const measured = await measureUntrained();
          if (measured === STOPPED) return stoppedEarly();
          untrainedReturn = measured;
        }
      } else {
        initialising = this.trainer.api.initCustom(mlpArgs, config, runInit);
        await guard(initialising);
        // The table shows it as running; a table that cannot be read does not end the training.
        this.loadTrainings().catch(() => undefined);
        t0 = now();
        await guard(Promise.all(await guard(this.publish(0, {}, {}, bridges, emit))));
        const measured = await measureUntrained();
        if (measured === STOPPED) return stoppedEarly();
        untrainedReturn = measured;
      }
      if (this.stopping) return stoppedEarly(); // Stop came during the setup's last step
      this.phase = start.kind === 'resume' ? `training (resumed from version ${startVersion})` : 'training';
      const p = new Pipeline<CustomBatch, CustomTrajectory>(
        customPipelineConfig(config),
        new CustomJobSource(spec.observations, config.gamma),
        {
          trainAndPublish: (batch, info) =>
            this.trainAndPublish(batch, info.fromVersion, bridges, emit, progress),
        },
        'custom-env',
        {
          emit,
          onStep: (r) => {
            if (training !== this.trainingsStarted) return; // a late step of an earlier training
            this.history = [...this.history, r];
            this.events = [...log.events];
            this.counters = countersOf(p);
            if (r.version >= config.iterations) this.end?.();
          },
          onError: (m) => {
            if (training === this.trainingsStarted) this.fail(m);
          },
        },
        {
          version: startVersion,
          nextSeq: 0,
          nextJobId: start.kind === 'resume' ? start.nextJobId : 0,
          groups: [],
        },
      );
      pipeline = p;
      bridges.forEach((b, i) =>
        p.addWorker(`rollout-${i}`, this.port(b, i, config.yieldEvery, emit), `rollout-${i}`),
      );
      p.start();
      await guard(ended);
      this.phase = 'finishing the update in progress';
      await guard(p.trainerIdle());
      this.counters = countersOf(p);
      if (this.failure) return;
      if (p.version === startVersion) return stoppedEarly();
      // The newest version, on the worker that measures it.
      await guard(
        measure.api.loadCustomPolicy(await guard(this.trainer.api.exportCustomPolicy()), p.version),
      );
      const trainedReturn = await guard(
        measure.api.customReturn(
          M,
          true,
          counted(
            (k) =>
              `measuring the trained policy (version ${p.version}, greedy), episode ${k} of ${M} (each up to ${spec.maxSteps} steps)`,
          ),
        ),
      );
      this.report = { spec, iterations: p.version, randomReturn, untrainedReturn, trainedReturn };
      result = { randomReturn, ...(untrainedReturn === null ? {} : { untrainedReturn }), trainedReturn };
    } catch (err) {
      if (err !== STOPPED_NOW) this.fail(errorMessage(err));
    } finally {
      this.endNow = null;
      pipeline?.stop();
      // A trainer still storing a version (after a rollout worker crashed) or still creating the
      // run finishes first, so that the stored status is the last word; a dead one is not waited for.
      const settled = Promise.all([pipeline?.trainerIdle(), initialising]).catch(() => undefined);
      await Promise.race([settled, new Promise((r) => setTimeout(r, SETTLE_WAIT_MS))]);
      const reached = pipeline?.version ?? startVersion;
      await this.settle(reached > startVersion, progress(), result);
      release();
      releaseTrainer();
      for (const b of bridges) b.terminate();
      // After Stop now, a trainer that does not answer is what hung: it starts again.
      const hung =
        stoppedNow !== null &&
        this.trainer.status === 'busy' &&
        !(await settlesWithin(this.trainer.api.stats(), TRAINER_ANSWER_MS));
      if (stoppedNow !== null && this.failure === null)
        this.notice = `Stopped at once while ${stoppedNow}: that was given up${hung ? ', and the trainer worker, which did not answer, starts again' : ''}. ${
          reached > startVersion
            ? `The training is stored up to version ${reached}${reached < config.iterations ? ': Resume goes on from there' : ''}.`
            : 'Nothing was trained.'
        }`;
      this.end = null;
      this.events = [...log.events];
      this.training = false;
      this.stopping = false;
      this.phase = null;
      if (hung) void this.trainer.restart();
      else if (this.trainer.status === 'busy') this.trainer.status = 'ready';
    }
  }

  /**
   * Stores how the training ended (its status, progress and returns) and refreshes the table. A
   * training stopped before its first update trained nothing: its run (version 0 only) goes; a
   * resume that trained nothing leaves the training as it was.
   */
  private async settle(
    trained: boolean,
    progress: RunProgress,
    result: CustomRunResult | undefined,
  ): Promise<void> {
    const runId = this.runId;
    const resumed = this.resumedFrom;
    this.runId = null;
    this.resumedFrom = null;
    if (!runId) return;
    try {
      const db = await this.database();
      // A version the trainer stored but whose answer was lost (a crash) counts as trained too.
      const stored = resumed ? ((await db.get('runs', runId))?.latestVersion ?? resumed.from) : 0;
      const didTrain = trained || (resumed !== null && stored > resumed.from);
      // A resume that trained nothing (stopped, or failed in its setup) leaves it as it was.
      if (!didTrain && resumed)
        await setRunStatus(db, runId, resumed.status, resumed.baselines ? { result: resumed.baselines } : {});
      else if (this.failure) await setRunStatus(db, runId, 'failed', { progress });
      else if (!didTrain) await deleteRun(db, runId);
      else await setRunStatus(db, runId, 'finished', { progress, ...(result ? { result } : {}) });
      await this.loadTrainings();
    } catch (err) {
      this.error ??= `the training's end could not be stored: ${errorMessage(err)}`;
    }
  }

  /** Stores a training's baselines as soon as they are measured (a resume reports them). */
  private async storeBaselines(runId: string, baselines: CustomRunResult): Promise<void> {
    await setRunStatus(await this.database(), runId, 'running', { result: baselines });
  }

  /** A rollout worker as the pipeline's port; its groups go on its lane of the timeline. */
  private port(
    bridge: RolloutBridge,
    i: number,
    yieldEvery: number,
    emit: Emit,
  ): RolloutPort<CustomTrajectory> {
    const lane = `rollout-${i}` as const;
    return {
      play: async (job) => {
        const group = await bridge.api.playCustom(job, yieldEvery);
        if (group.status !== 'done') return group;
        const returns = group.trajectories.map((t) => t.return);
        emit({
          lane,
          kind: 'episode',
          t0: group.startedAt,
          t1: group.endedAt,
          version: group.oldestVersion,
          meta: {
            job: job.jobId,
            episodes: returns.length,
            newest: group.newestVersion,
            meanReturn: Number((returns.reduce((a, b) => a + b, 0) / Math.max(1, returns.length)).toFixed(2)),
          },
        });
        for (const t of group.trajectories)
          for (const a of t.adoptions)
            emit({
              lane,
              kind: 'interrupt',
              t0: a.at,
              t1: a.at,
              version: a.version,
              meta: { job: job.jobId },
            });
        return group;
      },
      abort: (jobId) => bridge.api.abortCustom(jobId),
    };
  }

  /** The pipeline's training step: one update of the MLP, then the next version published. */
  private async trainAndPublish(
    batch: CustomBatch,
    fromVersion: number,
    bridges: readonly RolloutBridge[],
    emit: Emit,
    progress: () => RunProgress,
  ): Promise<TrainOutcome> {
    const t0 = now();
    const buffers = [batch.obs, batch.actions, batch.returns, batch.behavLogp].map((a) => a.buffer);
    const metrics = await this.trainer.api.trainCustom(Comlink.transfer(batch, buffers));
    emit({
      lane: 'trainer',
      kind: 'train-step',
      t0,
      t1: now(),
      version: fromVersion,
      meta: { loss: Number(metrics.loss.toFixed(4)), steps: batch.steps },
    });
    const version = fromVersion + 1;
    await this.publish(version, metricNumbers(metrics), progress(), bridges, emit);
    return { version, metrics, startedAt: t0, publishedAt: now() };
  }

  /**
   * Stores the trainer's weights as `version` (durable first), then sends them to every rollout
   * worker; each adopts it at its next yield (an adopt mark on its lane). Returns the adoptions,
   * for a caller that must wait for them.
   */
  private async publish(
    version: number,
    metrics: Record<string, number>,
    progress: RunProgress,
    bridges: readonly RolloutBridge[],
    emit: Emit,
  ): Promise<Promise<void>[]> {
    const t0 = now();
    const { snapshot, evicted } = await this.trainer.api.publishCustom(version, metrics, progress);
    const t1 = now();
    if (evicted) this.notice = evictionNotice(evicted, "the training's new version");
    emit({ lane: 'store', kind: 'publish', t0, t1, version });
    return bridges.map((b, i) =>
      b.api.loadCustomPolicy(snapshot, version).then(
        () => emit({ lane: `rollout-${i}`, kind: 'adopt', t0: t1, t1: now(), version }),
        () => undefined, // a worker that died meanwhile: its crash handler ends the training
      ),
    );
  }
}
