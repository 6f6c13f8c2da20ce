import * as Comlink from 'comlink';
import type { RolloutStats } from '../../../workers/rollout.worker';
import type { CustomEnvSpec } from '../custom/env';
import { runCounters, type Pipeline } from '../pipeline/controller';
import type { CustomTrajectory } from '../custom/workload';
import { EventLog, now, type TimelineEvent } from '../pipeline/events';
import type { WorkerPool } from '../pipeline/worker-pool';
import { CUSTOM_BASELINE_EPISODES, CUSTOM_MEASURE_EPISODES } from '../custom/config';
import type { CustomBatch } from '../custom/trainer';
import type { CustomRunResult } from '../storage/db';
import { errorMessage } from '../errors';
import { failureSignal, settlesWithin } from './failure-signal';
import type { CustomRunStore } from './custom-catalog';
import {
  customPoolWorkload,
  countersOf,
  customEnvSeed,
  customRunInit,
  customTrainerPort,
  quotaNotice,
  type Baselines,
  type CustomMeasurer,
  type Emit,
} from './custom-ports';
import type { CustomRunEvent, CustomStart, CustomTrainerPort } from './custom-run';
import { assemblePipeline } from './pipeline';
import { rolloutPool, type PooledRollout, type RolloutHost } from './rollout-pool';
import type { RunProgress } from '../pipeline/types';
import { STOPPED_EARLY, STOPPED_NOW } from './custom-stop';

export { STOPPED_EARLY, STOPPED_NOW };

/** What a setup step gives when Stop came first. */
const STOPPED = Symbol('stopped');
/** How long the end of a training waits for the trainer to finish what it was storing, ms. */
const SETTLE_WAIT_MS = 2_000;

const B = CUSTOM_BASELINE_EPISODES;
const M = CUSTOM_MEASURE_EPISODES;

/** What a session needs from its run. */
export interface SessionHooks {
  /** A view event of this training. */
  event(e: CustomRunEvent): void;
  /** The training fails with `message` (shown; its run is stored as failed). */
  fail(message: string): void;
  /** It has failed (a rollout error, a crash, storage gone). */
  failed(): boolean;
  /** Stop was asked. */
  stopping(): boolean;
  /** Its run is known (before the trainer creates it): from now on this page trains it. */
  claimed(): void;
  /** Set up: the pipeline runs. */
  running(): void;
  /** The stored trainings changed: the table reads them again (best effort). */
  stored(): void;
}

/** A rollout worker as a custom training drives it: in the pool, or as the measuring worker. */
export type CustomRolloutWorker = RolloutHost & CustomMeasurer;

/** What a session's workers need: the trainer, a rollout worker maker, the catalog. */
export interface SessionDeps {
  trainer: CustomTrainerPort;
  /** Makes a rollout worker named `name` (the page's `RolloutBridge`): the pool's, and the measuring one. */
  rolloutBridge(name: string, onCrash: (message: string) => void): CustomRolloutWorker;
  catalog: CustomRunStore;
}

/** The measuring worker's name. */
export const MEASURER_NAME = 'rollout-custom-0';

/**
 * One custom-environment training from its workers' start to their end: the steps of its setup
 * (environment, policy, baselines, on the measuring worker), the pipeline with its pool of
 * rollout workers (assembled and started as a code run's: a crashed or hung worker is replaced),
 * and the trained policy's measurement. Every wait races the crashes of the trainer and the
 * measuring worker, and Stop ends it whenever it comes.
 */
export class CustomSession {
  readonly log = new EventLog(5_000);
  readonly emit: Emit = (e) => this.push([e]);
  /** The worker that opens the environment first and measures the returns. */
  readonly measurer: CustomMeasurer;
  /** The version it started from (a resume's); the version it reached is the pipeline's. */
  startVersion = 0;
  /** Its returns, once the trained policy was measured. */
  result: CustomRunResult | undefined;
  /** The phase "Stop now" cut (null: it was not cut). */
  stoppedNow: string | null = null;
  /** A crashed worker never answers the calls waiting on it: every await below races this. */
  private readonly crashed = failureSignal();
  private pipeline: Pipeline<CustomBatch, CustomTrajectory> | null = null;
  private pool: WorkerPool<PooledRollout<CustomTrajectory>, RolloutStats> | null = null;
  private readonly ended: Promise<typeof STOPPED>;
  private resolveEnded: () => void = () => undefined;
  /** The trainer's creation (or resume) of the run: the end waits for it before storing the status. */
  private initialising: Promise<void> | undefined;
  private readonly releaseTrainer: () => void;
  private readonly unsubscribe: () => void;
  private t0 = now();

  constructor(
    readonly runId: string,
    readonly start: CustomStart,
    private readonly deps: SessionDeps,
    private readonly hooks: SessionHooks,
  ) {
    // Stop (or a crash) ends the training whenever it comes, setting up included.
    this.ended = new Promise((resolve) => (this.resolveEnded = () => resolve(STOPPED)));
    this.measurer = deps.rolloutBridge(MEASURER_NAME, (message) => {
      this.crash(`the measuring rollout worker crashed: ${message}; training stopped`);
      this.end();
    });
    this.releaseTrainer = deps.trainer.onCrash((message) => {
      this.crash(`the trainer worker crashed: ${message}; training stopped, and the trainer restarts`);
      this.end();
      void deps.trainer.restart();
    });
    // The trainer's train-step, publish and evict marks go on this training's timeline.
    this.unsubscribe = deps.trainer.onEvents((events) => this.push(events));
  }

  /**
   * Ends the training: scheduling stops and the pool's workers end; the update in progress
   * publishes, then the trained policy is measured.
   */
  end(): void {
    this.pipeline?.stop();
    this.pool?.close();
    this.resolveEnded();
  }

  /** Ends it at once, giving up what it waits on ("Stop now"): `phase` is what it was doing. */
  endNow(phase: string): void {
    this.stoppedNow = phase;
    this.crashed.reject(STOPPED_NOW);
    this.end();
  }

  /** The version it reached (published). */
  get reached(): number {
    return this.pipeline?.version ?? this.startVersion;
  }

  /** Its counters and seconds so far (a resume's go on from what it had stored). */
  progress(): RunProgress {
    const { start } = this;
    const seconds = (start.kind === 'resume' ? start.seconds : 0) + (now() - this.t0) / 1000;
    const p = this.pipeline;
    if (!p) return { seconds };
    const before = start.kind === 'resume' ? start.counters : {};
    return { counters: runCounters(before, p.counters), seconds, nextJobId: p.keys.nextJobId };
  }

  /** Sets up, trains until the iterations asked for or a Stop, then measures the trained policy. */
  async run(): Promise<void> {
    const baselines = await this.openEnvironments();
    if (baselines === STOPPED) return this.stoppedEarly();
    const ready =
      this.start.kind === 'resume' ? await this.resumePolicy(baselines) : await this.newPolicy(baselines);
    if (!ready || this.hooks.stopping()) return this.stoppedEarly(); // Stop came during the setup's last step
    const reached = await this.train(baselines.spec);
    if (reached === null) return;
    if (reached === this.startVersion) return this.stoppedEarly();
    await this.measureTrained(baselines, reached);
  }

  /** Stops the pipeline and waits (a short while: a dead trainer is not waited for) for what the trainer was storing. */
  async close(): Promise<void> {
    this.pipeline?.stop();
    // A trainer still storing a version (after a rollout worker crashed) or still creating the
    // run finishes first, so that the stored status is the last word.
    const settled = Promise.all([this.pipeline?.trainerIdle(), this.initialising]);
    await settlesWithin(settled, SETTLE_WAIT_MS);
  }

  /** Lets go of the trainer and ends the rollout workers. */
  dispose(): void {
    this.releaseTrainer();
    this.unsubscribe();
    this.pool?.close();
    this.measurer.terminate();
  }

  private push(events: readonly TimelineEvent[]): void {
    this.log.push(...events);
    for (const e of events) {
      const message = quotaNotice(e, "the training's new version");
      if (message) this.hooks.event({ type: 'notice', message });
    }
  }

  private crash(message: string): void {
    this.crashed.reject(new Error(message));
  }

  private guard<T>(p: Promise<T>): Promise<T> {
    return Promise.race([p, this.crashed.promise]);
  }

  /** While setting up, Stop does not wait for the workers' baselines: they are ended with them. */
  private setup<T>(p: Promise<T>): Promise<T | typeof STOPPED> {
    return this.guard(Promise.race([p, this.ended]));
  }

  private stoppedEarly(): void {
    this.hooks.event({ type: 'notice', message: STOPPED_EARLY });
  }

  /** The phase with an episode counter, which the worker that measures moves after each episode. */
  private counted(what: (done: number) => string): ((done: number) => void) & Comlink.ProxyMarked {
    this.hooks.event({ type: 'phase', phase: what(0) });
    return Comlink.proxy((done: number) => this.hooks.event({ type: 'phase', phase: what(done) }));
  }

  /** Step 1: the measuring worker opens the environment and measures random actions. */
  private async openEnvironments(): Promise<Baselines | typeof STOPPED> {
    const measurer = this.measurer.api;
    const opened = await this.setup(measurer.openCustomEnv(this.start.code, customEnvSeed(this.start)));
    if (opened === STOPPED) return STOPPED;
    const randomReturn = await this.setup(
      measurer.customRandomReturn(
        this.counted(
          (k) =>
            `setting up: measuring random actions, episode ${k} of ${B} (each up to spec.maxSteps steps)`,
        ),
      ),
    );
    if (randomReturn === STOPPED) return STOPPED;
    // Known before the trainer creates it: a crash meanwhile still stores how it ended.
    this.hooks.claimed();
    return { spec: opened.spec, randomReturn, untrainedReturn: null };
  }

  /**
   * The untrained policy's return (the version the workers hold), stored with the random
   * actions' as soon as measured, so that a resume after a reload can report them.
   */
  private async measureUntrained(b: Baselines): Promise<boolean> {
    await this.guard(this.measurer.api.adoptStoredCustom(this.runId));
    const measured = await this.setup(
      this.measurer.api.customReturn(
        M,
        false,
        this.counted(
          (k) =>
            `setting up: measuring the untrained policy, episode ${k} of ${M} (each up to ${b.spec.maxSteps} steps)`,
        ),
      ),
    );
    if (measured === STOPPED) return false;
    await this.guard(
      this.deps.catalog.storeBaselines(this.runId, {
        randomReturn: b.randomReturn,
        untrainedReturn: measured,
      }),
    );
    b.untrainedReturn = measured;
    return true;
  }

  /** Step 2 of a fresh training: the trainer builds the MLP and stores version 0. */
  private async newPolicy(b: Baselines): Promise<boolean> {
    const { init, mlp } = customRunInit(this.runId, this.start, b.spec);
    this.initialising = this.deps.trainer.api.initCustom(mlp, this.start.config, init);
    await this.guard(this.initialising);
    // The table shows it as running; a table that cannot be read does not end the training.
    this.hooks.stored();
    this.t0 = now();
    await this.guard(this.deps.trainer.api.publishCustom(0, {}, {}));
    return this.measureUntrained(b);
  }

  /**
   * Step 2 of a resume: the trainer restores the newest stored version (the workers adopt it from
   * the store as they join). It reports the baselines measured when the training began (random actions measured again
   * only when they were not stored).
   */
  private async resumePolicy(b: Baselines): Promise<boolean> {
    const { start } = this;
    if (start.kind !== 'resume') throw new Error('not a resume');
    const { init, mlp } = customRunInit(this.runId, this.start, b.spec);
    const resuming = this.deps.trainer.api.resumeCustom(start.config, init);
    this.initialising = resuming.then(() => undefined);
    const from = await this.guard(resuming);
    if (from.args.inputs !== mlp.inputs || from.args.actions !== mlp.actions)
      throw new Error(
        `the stored policy has ${from.args.inputs} inputs and ${from.args.actions} actions, the environment ${mlp.inputs} and ${mlp.actions}: it cannot be resumed on it`,
      );
    this.startVersion = from.version;
    this.hooks.event({ type: 'start-version', version: from.version });
    if (from.version >= start.config.iterations)
      throw new Error(
        `it has trained its ${start.config.iterations} iterations already (version ${from.version}): there is nothing to resume`,
      );
    b.randomReturn = start.baselines?.randomReturn ?? b.randomReturn;
    b.untrainedReturn = start.baselines?.untrainedReturn ?? null;
    // Its trained return is for an older version from now on.
    const untrained = b.untrainedReturn === null ? {} : { untrainedReturn: b.untrainedReturn };
    await this.guard(
      this.deps.catalog.storeBaselines(this.runId, { randomReturn: b.randomReturn, ...untrained }),
    );
    this.hooks.stored();
    this.t0 = now();
    // Closed before it measured the untrained policy: version 0 is that policy.
    if (b.untrainedReturn === null && from.version === 0) return this.measureUntrained(b);
    return true;
  }

  /**
   * Step 3: the pipeline plays and trains until the iterations asked for, a Stop or a failure;
   * then the update in progress finishes. Returns the version reached (null: it failed).
   */
  private async train(spec: CustomEnvSpec): Promise<number | null> {
    const { config } = this.start;
    const resumed = this.start.kind === 'resume';
    this.hooks.event({
      type: 'phase',
      phase: resumed ? `training (resumed from version ${this.startVersion})` : 'training',
    });
    const { pipeline: p, lanes } = assemblePipeline(
      {
        kind: 'custom',
        runId: this.runId,
        config,
        inputs: spec.observations,
        restored: {
          version: this.startVersion,
          nextJobId: this.start.kind === 'resume' ? this.start.nextJobId : 0,
        },
      },
      {
        trainer: customTrainerPort(this.deps.trainer.api, () => this.progress()),
        hooks: {
          emit: this.emit,
          onStep: (report) => {
            this.hooks.event({
              type: 'step',
              report,
              counters: countersOf(p.counters),
              timeline: [...this.log.events],
            });
            if (report.version >= config.iterations) this.end();
          },
          onError: (m) => this.hooks.fail(m),
        },
      },
    );
    this.pipeline = p;
    const training = { config, code: this.start.code, seed: customEnvSeed(this.start) };
    this.pool = rolloutPool(
      lanes,
      p,
      customPoolWorkload(this.runId, training, this.emit),
      this.deps.rolloutBridge,
      {
        push: (events) => this.push(events),
        backend: () => undefined,
        notice: (message) => this.hooks.event({ type: 'notice', message }),
        error: (m) => this.hooks.fail(m),
      },
    );
    p.start();
    // Its workers join as they start; Stop meanwhile closes the pool, which ends them.
    this.pool.start().catch((err: unknown) => {
      if (!p.isStopped) this.hooks.fail(`the rollout workers could not start: ${errorMessage(err)}`);
    });
    this.hooks.running();
    await this.guard(this.ended);
    this.hooks.event({ type: 'phase', phase: 'finishing the update in progress' });
    await this.guard(p.trainerIdle());
    this.hooks.event({ type: 'counters', counters: countersOf(p.counters) });
    return this.hooks.failed() ? null : p.version;
  }

  /** Step 4: the newest version, on the worker that measures it, played greedily. */
  private async measureTrained(b: Baselines, version: number): Promise<void> {
    const measure = this.measurer;
    await this.guard(measure.api.adoptStoredCustom(this.runId));
    const trainedReturn = await this.guard(
      measure.api.customReturn(
        M,
        true,
        this.counted(
          (k) =>
            `measuring the trained policy (version ${version}, greedy), episode ${k} of ${M} (each up to ${b.spec.maxSteps} steps)`,
        ),
      ),
    );
    const { spec, randomReturn, untrainedReturn } = b;
    this.hooks.event({
      type: 'report',
      report: { spec, iterations: version, randomReturn, untrainedReturn, trainedReturn },
    });
    this.result = { randomReturn, ...(untrainedReturn === null ? {} : { untrainedReturn }), trainedReturn };
  }
}
