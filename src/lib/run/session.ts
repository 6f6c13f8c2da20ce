import * as Comlink from 'comlink';
import { errorMessage } from '../errors';
import type { RolloutStats } from '../../../workers/rollout.worker';
import type { PipelineRunInit, TrainerApi } from '../../../workers/trainer.worker';
import { storedStepMetrics } from '../policy/metrics';
import type { CodeJobSource } from '../pipeline/code-workload';
import { scheduledRate } from '../rl/learner-config';
import { runCounters, type Pipeline } from '../pipeline/controller';
import { EventLog, now, type Lane, type TimelineEvent } from '../pipeline/events';
import type { HoldView } from '../pipeline/hold';
import type { RunConfig } from '../config/run-config';
import type {
  PipelineTrainerPort,
  PlayedGroup,
  RolloutJob,
  StepReport,
  RunProgress,
} from '../pipeline/types';
import type { FaultRecord, WorkerPool } from '../pipeline/worker-pool';
import type { TokenBatch } from '../rl/batch';
import { evictionNotice } from '../storage/quota';
import { WorkerTimeout } from '../bridge/worker-errors';
import { assemblePipeline, runInit, type Restored } from './pipeline';
import {
  codePoolWorkload,
  rolloutPool,
  type Called,
  type PooledRollout,
  type RolloutFactory,
} from './rollout-pool';
import type { LeasedTrainer } from './trainer-lease';

/** What a code run calls on the trainer worker. */
export type CodeTrainerApi = {
  [
    K in 'trainAndPublish' | 'resumeRun' | 'resetPolicy' | 'startRun' | 'stopRun' | 'stats' | 'debugFault'
  ]: Called<TrainerApi[K]>;
};

/** The trainer as a code run holds it: the lease, and the worker's timeline events. */
export interface RunTrainer {
  readonly lease: LeasedTrainer<CodeTrainerApi>;
  /** Subscribes to the trainer's timeline events; returns the unsubscribe function. */
  onEvents(listener: (events: TimelineEvent[]) => void): () => void;
}

/** Hears each group the controller takes: its job, the group, and the lane that played it. */
export type PlayedListener = (job: RolloutJob, group: PlayedGroup, lane: Lane) => void;

/** What the page hears from a running session. */
export interface SessionHooks {
  onStep(report: StepReport): void;
  /** The run stopped because of an error. */
  onError(message: string): void;
  /** Something the user should know that does not stop the run (an eviction, a restart). */
  onNotice(message: string): void;
  /** Where Pause / Step stand now, when that changed. */
  onHold?(view: HoldView): void;
}

/**
 * Heartbeat of the trainer: a `stats()` call it does not answer within this is a hang. It may
 * compute for a long time (shader compilation), so the bound is generous.
 */
const TRAINER_HANG_MS = 60_000;
/** How long Stop waits for the trainer to record how the run ended. */
const STOP_ANSWER_MS = 10_000;

/**
 * One training run: the controller (`Pipeline`), its rollout worker pool with fault detection,
 * and the leased trainer worker, wired together. Not reactive; the run's view reads it.
 */
export class PipelineSession {
  readonly pipeline: Pipeline;
  readonly source: CodeJobSource;
  readonly log = new EventLog(20_000);
  readonly lanes: Lane[];
  /** Rollout backend of the workers, once one has joined. */
  rolloutBackend: string | null = null;
  private pool: WorkerPool<PooledRollout, RolloutStats> | null = null;
  private readonly unsubscribe: (() => void)[] = [];
  private readonly playedListeners = new Set<PlayedListener>();
  private trainerTimer: ReturnType<typeof setInterval> | undefined;
  /** A heartbeat call is in flight (it rejects with `WorkerTimeout` once the trainer hangs). */
  private trainerPing = false;
  /**
   * The trainer's restart in progress (Stop waits for it before it closes the run). Its calls
   * are bounded, and a crash meanwhile rejects the one in flight: it always settles.
   */
  private restarting: Promise<void> | null = null;
  private readonly secondsBefore: number;
  private readonly countersBefore: Record<string, number>;
  private readonly t0 = now();

  constructor(
    readonly runId: string,
    readonly settings: RunConfig,
    private readonly trainer: RunTrainer,
    private readonly hooks: SessionHooks,
    restored: Restored | null,
    /** Makes the rollout workers (the page's `RolloutBridge`). */
    private readonly createRollout: RolloutFactory,
  ) {
    const assembled = assemblePipeline(
      { runId, settings, restored },
      {
        trainer: this.trainerPort(),
        hooks: {
          emit: (e) => this.push([e]),
          onStep: (r) => hooks.onStep(r),
          onError: (m) => hooks.onError(m),
          onHold: (v) => hooks.onHold?.(v),
          onPlayed: (job, group, lane) => this.played(job, group, lane),
        },
      },
    );
    this.pipeline = assembled.pipeline;
    this.source = assembled.source;
    this.lanes = assembled.lanes;
    this.secondsBefore = restored?.progress?.seconds ?? 0;
    this.countersBefore = { ...restored?.progress?.counters };
    this.unsubscribe.push(trainer.onEvents((events) => this.push(events)));
    this.unsubscribe.push(
      trainer.lease.takeCrashes((message) => void this.restartTrainer(`crashed: ${message}`)),
    );
  }

  private get api(): CodeTrainerApi {
    return this.trainer.lease.api;
  }

  /** The run's trainer-side description (retention, stored config). */
  get runInit(): PipelineRunInit {
    return runInit(this.runId, this.settings);
  }

  /** Wall seconds the run has trained, over all its sessions. */
  get seconds(): number {
    return this.secondsBefore + (now() - this.t0) / 1000;
  }

  /**
   * The run's counters over all its sessions: the earlier sessions' (a resumed run's, as stored)
   * plus this session's pipeline's. The dashboard's own figures are this session's.
   */
  runCounters(): Record<string, number> {
    return runCounters(this.countersBefore, this.pipeline.counters);
  }

  /**
   * What is saved with every version for a resume. It is taken as the trainer starts the step
   * that makes the version: the counters count that step and its episodes as trained.
   */
  progress(): RunProgress {
    const counters = this.runCounters();
    const batch = this.pipeline.inFlight;
    if (batch) {
      counters.trainSteps = (counters.trainSteps ?? 0) + 1;
      counters.trainedEpisodes = (counters.trainedEpisodes ?? 0) + batch.episodes;
    }
    return {
      ...this.source.progress(),
      counters,
      seconds: this.seconds,
      ...this.pipeline.keys,
    };
  }

  /** Calls `listener` with every group the controller takes (the program feed); returns the unsubscribe function. */
  onPlayed(listener: PlayedListener): () => void {
    this.playedListeners.add(listener);
    return () => this.playedListeners.delete(listener);
  }

  /** A listener that throws is the view's fault: the run goes on, and the page says so. */
  private played(job: RolloutJob, group: PlayedGroup, lane: Lane): void {
    for (const listener of this.playedListeners) {
      try {
        listener(job, group, lane);
      } catch (err) {
        this.playedListeners.delete(listener);
        this.hooks.onNotice(`The program feed stopped following the run: ${errorMessage(err)}`);
      }
    }
  }

  private push(events: readonly TimelineEvent[]): void {
    this.log.push(...events);
    for (const e of events) {
      if (e.kind === 'evict' && e.meta?.reason === 'quota')
        this.hooks.onNotice(
          evictionNotice(
            {
              trajectories: Number(e.meta.trajectories ?? 0),
              versions: Number(e.meta.versions ?? 0),
              events: Number(e.meta.events ?? 0),
            },
            "the run's samples and versions",
          ),
        );
    }
  }

  private trainerPort(): PipelineTrainerPort {
    return {
      trainAndPublish: (batch: TokenBatch, info) => {
        const buffers = [
          batch.tokens,
          batch.actions,
          batch.mask,
          batch.advantages,
          batch.returns,
          batch.behavLogp,
          batch.legal,
          batch.weights,
        ]
          .filter((a) => a !== undefined)
          .map((a) => a.buffer);
        return this.api.trainAndPublish(Comlink.transfer(batch, buffers), {
          ...info,
          updates: this.settings.learner.updatesPerBatch,
          rate: scheduledRate(this.settings.learner, info.fromVersion),
          progress: this.progress(),
        });
      },
    };
  }

  /** Starts the rollout workers and scheduling (the trainer has published the run's version). */
  async start(): Promise<void> {
    if (this.pipeline.isStopped) return; // stopped before it started: no workers to outlive it
    const workload = codePoolWorkload(this.runId, this.settings);
    this.pool = rolloutPool(this.lanes, this.pipeline, workload, this.createRollout, {
      push: (events) => this.push(events),
      backend: (b) => (this.rolloutBackend = b),
      notice: (m) => this.hooks.onNotice(m),
      error: (m) => this.hooks.onError(m),
    });
    this.pipeline.start();
    await this.pool.start();
    if (this.pipeline.isStopped) return; // stopped while its workers started: no heartbeat to outlive it
    this.trainerTimer = setInterval(() => this.beatTrainer(), 1000);
  }

  /** Rollout faults handled so far (the page and the tests read them). */
  get faults(): readonly FaultRecord[] {
    return this.pool?.faults ?? [];
  }

  /** The live rollout workers' last heartbeats: versions, result caches (for the dashboard). */
  workerStats(): { lane: Lane; stats: RolloutStats | null }[] {
    return (this.pool?.workers() ?? []).map(({ lane, last }) => ({ lane, stats: last }));
  }

  /** Injects a fault into a rollout worker (`?debug` tests): crash, hang or exit. */
  fault(index: number, kind: 'crash' | 'hang' | 'exit'): number {
    const w = this.pool?.workers().find((x) => x.lane === `rollout-${index}`);
    if (!w) throw new Error(`no live rollout-${index}`);
    void w.worker.host.api.debugFault(kind);
    return now();
  }

  /** Kills the trainer worker (`?debug` tests); the session restarts it from the store. */
  faultTrainer(): number {
    void this.api.debugFault('crash');
    return now();
  }

  private beatTrainer(): void {
    if (this.restarting || this.trainerPing) return;
    this.trainerPing = true;
    // A crash or a restart rejects the call too: the crash handler or the restart deals with those.
    this.trainer.lease
      .withTimeout(TRAINER_HANG_MS)
      .stats()
      .then(
        () => undefined,
        (err: unknown) => {
          if (err instanceof WorkerTimeout && !this.restarting && !this.pipeline.isStopped)
            this.restartTrainer('hung: no heartbeat for 60 s');
        },
      )
      .finally(() => (this.trainerPing = false));
  }

  /**
   * The trainer died or hangs: its batch goes back to the buffer, the worker restarts on the same
   * backends from the run's newest stored version (weights, Adam state, step), and training goes on.
   * A crash during a restart rejects that attempt's call in flight, which ends it; a trainer that
   * keeps crashing without publishing a version stops the run (the lease's crash policy).
   */
  private restartTrainer(reason: string): void {
    if (this.restarting) return; // the restart's call in flight rejects: that attempt ends
    this.pipeline.trainerLost();
    const lease = this.trainer.lease;
    if (this.pipeline.isStopped) {
      // Stopping: a Stop waiting for the lost step does not wait for it, and the page gets a
      // working trainer again (not resuming this run).
      this.beginRestart(() => lease.restart().then(() => undefined));
      return;
    }
    const { allowed, count } = lease.countRestart(this.pipeline.version);
    if (!allowed) {
      this.beginRestart(() => lease.restart().then(() => undefined)); // a bare trainer for the page
      this.hooks.onError(
        `the trainer ${reason}, the ${count}th time without publishing a version; the run stopped`,
      );
      return;
    }
    this.beginRestart(() => this.restartFromStore(reason));
  }

  /** Runs `attempt` as the restart in progress. */
  private beginRestart(attempt: () => Promise<void>): void {
    this.restarting = attempt()
      .catch((err: unknown) => {
        if (!this.pipeline.isStopped)
          this.hooks.onError(`the trainer could not be restarted: ${errorMessage(err)}`);
      })
      .finally(() => (this.restarting = null));
  }

  private async restartFromStore(reason: string): Promise<void> {
    const t0 = now();
    this.push([
      { lane: 'trainer', kind: 'error', t0, t1: t0, version: this.pipeline.version, meta: { reason } },
    ]);
    this.hooks.onNotice(`The trainer ${reason}; restarting it from the newest stored version.`);
    const lease = this.trainer.lease;
    await lease.restart();
    if (lease.state.phase === 'error') throw new Error(lease.state.error ?? 'trainer did not start');
    if (this.pipeline.isStopped) return; // stopped meanwhile: the fresh trainer stays ready
    lease.acquire('run');
    const point = await lease.withTimeout(TRAINER_HANG_MS).resumeRun(this.runInit, this.settings);
    if (this.pipeline.isStopped) return; // stopped meanwhile: Stop closes the resumed run
    if (point.notice) this.hooks.onNotice(point.notice);
    // A step published just before the trainer died is reported with the metrics it stored (a
    // version of an older build kept only loss and ms: not enough for a chart point).
    this.pipeline.trainerRestored(
      this.trainerPort(),
      point.version,
      'entropy' in point.metrics ? storedStepMetrics(point.metrics, this.settings.learner.loss) : undefined,
    );
    this.push([
      {
        lane: 'trainer',
        kind: 'restart',
        t0,
        t1: now(),
        version: point.version,
        meta: { reason, fromVersion: point.version },
      },
    ]);
  }

  /**
   * Stops scheduling and the workers; the trainer records how the run ended. The step in progress
   * publishes its version first. A trainer that crashes meanwhile releases the wait; one that
   * hangs is waited for as long as the heartbeat would (60 s), then restarted bare, so that the
   * page is not left with a trainer marked ready that never answers.
   */
  async stop(status: 'paused' | 'finished' | 'failed'): Promise<void> {
    this.pipeline.stop();
    clearInterval(this.trainerTimer);
    this.pool?.close();
    // A restart in progress finishes first (its calls are bounded), so the run it reopens is the
    // one closed below.
    await this.restarting;
    await this.pipeline.trainerIdle(TRAINER_HANG_MS);
    let hung = this.pipeline.inFlight !== null;
    await this.restarting; // it crashed meanwhile
    for (const u of this.unsubscribe) u();
    const stopped = { progress: this.progress(), consumed: this.pipeline.takeSettled() };
    if (!hung) {
      const notice = this.hooks.onNotice;
      hung = await this.trainer.lease
        .withTimeout(STOP_ANSWER_MS)
        .stopRun(this.runId, status, stopped)
        .then(
          (e) => {
            if (e) notice(evictionNotice(e, 'how the run ended'));
            return false;
          },
          (err: unknown) => {
            if (err instanceof WorkerTimeout) return true;
            notice(
              `How the run ended could not be stored (${errorMessage(err)}): it shows as interrupted, and Resume goes on from its newest version.`,
            );
            return false;
          },
        );
    }
    if (hung) {
      // Its data is stored either way; the run keeps the status it had (shown as interrupted).
      this.hooks.onNotice('The trainer did not answer while the run stopped: it was started again.');
      await this.trainer.lease.restart();
    }
  }
}
