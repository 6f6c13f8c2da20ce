import { errorMessage } from '../errors';
import type { EnvConfig } from '../env/config';
import type { Task } from '../env/suite';
import type { TokenBatch } from '../rl/batch';
import { Rng } from '../random';
import { ReplayBuffer, type Drawn, type ReplayConfig } from '../rl/replay';
import { now, type Lane, type TimelineEvent } from './events';
import { preemptionVictim, WaitingQueue, type JobClass } from './scheduler';
import { admissionCapacity, isStale, slotsHeldByEta, staleness } from './staleness';
import type { Trajectory } from '../rl/trajectory';
import type { StepMetrics } from '../policy/metrics';
import type {
  EpisodeOutcome,
  PipelineTrainerPort,
  PlayedGroup,
  RolloutJob,
  RolloutPort,
  StepReport,
} from './types';

/** Settings of the asynchronous pipeline (DESIGN §2, §5, §6). */
export interface PipelineConfig {
  /** Max staleness η in versions: 0 is synchronous (rollout and training alternate), `Infinity` unbounded. */
  eta: number;
  /** Groups per training batch (B); each group is `groupSize` episodes of one task. */
  batchGroups: number;
  /** Episodes per group. */
  groupSize: number;
  /** Groups one rollout worker plays at once (its slots; their episodes decode in one batch). */
  slotsPerWorker: number;
  /** A waiting job of a higher class preempts the lowest-value running job after this long, ms. */
  preemptAfterMs: number;
  /** FIFO (each sample once) or prioritized replay. */
  replay: ReplayConfig;
  env: EnvConfig;
  /** Rollout workers relabel programs whose outputs are integers up to this magnitude (hindsight); 0: off. */
  relabelMaxAbs: number;
  /** One-token variants of each relabelled program, relabelled too (`HindsightConfig.mutations`). */
  relabelMutations: number;
  /** Seed of job seeds and of prioritized draws. */
  seed: number;
  /** A job whose `play` throws is retried this many times before the run stops with its error. */
  maxJobFailures: number;
}

/**
 * Where the pipeline's jobs come from and how its batches are made: `CodeJobSource` for the
 * code-writing env (token batches), `CustomJobSource` for a custom JS environment.
 */
export interface JobSource<B = TokenBatch, T extends EpisodeOutcome = Trajectory> {
  /** The next training task, with its priority class and expected learning value. */
  nextTask(): { task: Task; cls: JobClass; value: number };
  /** A finished group (curriculum, per-task records). */
  record(group: PlayedGroup<T>): void;
  /** The message a rollout that kept failing stops the run with (default: its task and tries). */
  describeFailure?(task: Task, tries: number, message: string): string;
  /**
   * The training batch of `groups` (importance `weights` scale their advantages) and each
   * group's new replay priority.
   */
  batch(groups: readonly PlayedGroup<T>[], weights: readonly number[]): { batch: B; priorities: number[] };
}

/** Counters the page and the bench read. */
export interface PipelineCounters {
  /** Groups started, finished (accepted), trained (drawn into a batch), per their episodes. */
  startedGroups: number;
  generatedEpisodes: number;
  trainedEpisodes: number;
  trainSteps: number;
  staleDrops: number;
  staleDroppedEpisodes: number;
  preemptions: number;
  requeues: number;
  /** Episodes that adopted a new version mid-way. */
  interrupts: number;
  /** Trained groups by staleness (trainer version − oldest token version). */
  stalenessHistogram: Record<number, number>;
  /** Wall ms the trainer spent training and publishing. */
  trainerBusyMs: number;
  trainerRestarts: number;
  /** Groups pushed out of a full replay buffer before being trained on (unbounded η only). */
  replayOverflow: number;
}

/** A run's counters over all its sessions: those stored before this session's, plus `counters`' numbers. */
export function runCounters(
  before: Readonly<Record<string, number>>,
  counters: PipelineCounters,
): Record<string, number> {
  const out: Record<string, number> = { ...before };
  for (const [k, v] of Object.entries(counters)) if (typeof v === 'number') out[k] = (out[k] ?? 0) + v;
  return out;
}

interface WorkerEntry<T extends EpisodeOutcome> {
  id: string;
  lane: Lane;
  port: RolloutPort<T>;
  slots: number;
  jobs: Set<number>;
}

interface Running {
  job: RolloutJob;
  workerId: string;
  startedAt: number;
  failures: number;
}

interface Queued {
  id: number;
  cls: JobClass;
  value: number;
  enqueuedAt: number;
  task: Task;
  failures: number;
}

/** Callbacks of the pipeline: timeline events, progress, and a failure that stops the run. */
export interface PipelineHooks {
  emit?(event: TimelineEvent): void;
  onStep?(report: StepReport): void;
  onError?(message: string): void;
}

/**
 * The controller of the asynchronous pipeline (main thread). It admits jobs under the staleness
 * bound into free rollout slots, ordered by class and learning value, preempts when a
 * higher-class job waits too long, collects finished groups into the replay buffer, feeds the
 * trainer a batch whenever it is idle and one is ready (dropping stale samples), and requeues
 * the work of a worker that died. With η = 0 this is exactly the synchronous loop. `B` is the
 * trainer's batch and `T` an episode's data (token batches and trajectories by default).
 */
export class Pipeline<B = TokenBatch, T extends EpisodeOutcome = Trajectory> {
  /** Latest published version: jobs admitted now run at least this version. */
  version: number;
  /** Groups finished and kept for training (stale drops excluded). */
  accepted: number;
  readonly counters: PipelineCounters = {
    startedGroups: 0,
    generatedEpisodes: 0,
    trainedEpisodes: 0,
    trainSteps: 0,
    staleDrops: 0,
    staleDroppedEpisodes: 0,
    preemptions: 0,
    requeues: 0,
    interrupts: 0,
    stalenessHistogram: {},
    trainerBusyMs: 0,
    trainerRestarts: 0,
    replayOverflow: 0,
  };
  readonly buffer: ReplayBuffer<PlayedGroup<T>>;
  private readonly workers = new Map<string, WorkerEntry<T>>();
  private readonly running = new Map<number, Running>();
  private readonly waiting = new WaitingQueue<Queued>();
  private readonly rng: Rng;
  private nextJobId: number;
  private nextSeq: number;
  private trainerReady = false;
  private training: {
    drawn: Drawn<PlayedGroup<T>>[];
    fromVersion: number;
    since: number;
    settled: number[];
    /** What the draw changed, undone when the step is lost: keys it marked trained, and `fresh` it took. */
    undo: { marked: number[]; fresh: number };
  } | null = null;
  /**
   * Seqs of groups dropped untrained (stale, or pushed out of a full buffer). They are marked
   * consumed with the next published version, so a resumed run does not bring them back.
   */
  private settled: number[] = [];
  /** The batch the trainer was computing when it died, and what its draw changed. */
  private lostBatch: PlayedGroup<T>[] = [];
  private lostUndo: { marked: number[]; fresh: number } = { marked: [], fresh: 0 };
  /** Groups accepted since the last batch was drawn (prioritized mode trains once per B new groups). */
  private fresh = 0;
  /**
   * Prioritized mode: the buffered groups already trained on (they stay, to be drawn again). One
   * that leaves the buffer (stale, pushed out) simply retires: it was accepted and trained, so it
   * stays counted in `accepted` and is no stale drop. Only groups never trained leave `accepted`.
   */
  private readonly trainedKeys = new Set<number>();
  private lastTrainEnd: number;
  private stopped = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  readonly startedAt = now();

  constructor(
    readonly config: PipelineConfig,
    private readonly source: JobSource<B, T>,
    private trainer: PipelineTrainerPort<B>,
    readonly runId: string,
    private readonly hooks: PipelineHooks = {},
    /** Where a resumed run stands: its latest version, next keys, and unconsumed groups. */
    restored: {
      version: number;
      nextSeq: number;
      nextJobId: number;
      groups: PlayedGroup<T>[];
      /** Stored seqs no group takes (superseded attempts): marked consumed with the next version. */
      superseded?: readonly number[];
    } = {
      version: 0,
      nextSeq: 0,
      nextJobId: 0,
      groups: [],
    },
  ) {
    if (!(config.eta >= 0)) throw new Error(`η must be ≥ 0 (or Infinity), got ${config.eta}`);
    for (const k of ['batchGroups', 'groupSize', 'slotsPerWorker'] as const) {
      if (!Number.isInteger(config[k]) || config[k] < 1)
        throw new Error(`pipeline ${k} must be a positive integer, got ${config[k]}`);
    }
    this.rng = new Rng(config.seed);
    this.buffer = new ReplayBuffer(config.replay);
    this.version = restored.version;
    this.nextSeq = restored.nextSeq;
    this.nextJobId = restored.nextJobId;
    this.settled.push(...(restored.superseded ?? []));
    // More unconsumed groups than the buffer holds (unbounded η): the stalest are pushed out, as
    // they would have been in the run, counted, and marked consumed with the next version.
    let kept = restored.groups.length;
    for (const g of restored.groups) {
      for (const out of this.buffer.add(g.jobId, g)) {
        this.settled.push(...out.seqs);
        kept -= 1;
        this.counters.replayOverflow += 1;
      }
    }
    this.fresh = kept;
    // The unconsumed groups were accepted under the versions before this one.
    this.accepted = restored.version * config.batchGroups + kept;
    this.lastTrainEnd = this.startedAt;
  }

  /** Starts scheduling; `tickMs` > 0 runs the preemption check on a timer (0: call `tick()` yourself). */
  start(tickMs = 100): void {
    if (this.stopped) return; // a stopped pipeline stays stopped: no timer to outlive it
    this.trainerReady = true;
    if (tickMs > 0) this.timer = setInterval(() => this.tick(), tickMs);
    this.pump();
  }

  /** Stops admitting work and aborts running jobs; the trainer's step in progress finishes. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    for (const [jobId, r] of this.running) void this.workers.get(r.workerId)?.port.abort(jobId);
    this.running.clear();
    for (const w of this.workers.values()) w.jobs.clear();
    this.waiting.clear();
  }

  /** Resolves once the trainer has no step in progress (a stopped run waits for it before closing). */
  async trainerIdle(timeoutMs = 120_000): Promise<void> {
    const until = now() + timeoutMs;
    while (this.training && now() < until) await new Promise((r) => setTimeout(r, 20));
  }

  /**
   * Seqs of groups dropped untrained since the last batch (a stopped run marks them consumed, so
   * that a resume does not bring them back to drop and count them again); clears them.
   */
  takeSettled(): number[] {
    const out = this.settled;
    this.settled = [];
    return out;
  }

  /** The step the trainer is computing, if any: how many episodes it trains on. */
  get inFlight(): { episodes: number } | null {
    if (!this.training) return null;
    return { episodes: this.training.drawn.reduce((n, d) => n + d.item.trajectories.length, 0) };
  }

  /** The next job id and seq this pipeline gives (saved with each version, for a resume). */
  get keys(): { nextJobId: number; nextSeq: number } {
    return { nextJobId: this.nextJobId, nextSeq: this.nextSeq };
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  get runningGroups(): number {
    return this.running.size;
  }

  /** Jobs requeued after a worker or rollout failure, waiting for a slot (new jobs never wait). */
  get waitingGroups(): number {
    return this.waiting.size;
  }

  /** Free slots the staleness bound η keeps idle now (0 with η unbounded, and once stopped). */
  get slotsHeldByEta(): number {
    if (this.isStopped) return 0;
    return slotsHeldByEta(
      { version: this.version, accepted: this.accepted, running: this.running.size },
      { maxConcurrent: this.maxConcurrent, eta: this.config.eta, batch: this.config.batchGroups },
    );
  }

  /** Slots of live workers. */
  get maxConcurrent(): number {
    let n = 0;
    for (const w of this.workers.values()) n += w.slots;
    return n;
  }

  /** Fraction of wall time since start the trainer spent computing. */
  trainerBusyFraction(at = now()): number {
    const busyNow = this.training ? Math.max(0, at - this.training.since) : 0;
    return (this.counters.trainerBusyMs + busyNow) / Math.max(1, at - this.startedAt);
  }

  /** Adds a live rollout worker with free slots. */
  addWorker(id: string, port: RolloutPort<T>, lane: Lane): void {
    if (this.workers.has(id)) throw new Error(`worker ${id} is already in the pipeline`);
    this.workers.set(id, { id, lane, port, slots: this.config.slotsPerWorker, jobs: new Set() });
    this.pump();
  }

  /**
   * Removes a worker that died or hung: its running jobs go back to the queue at the highest
   * class (their episodes were lost with the worker; nothing completed is lost).
   */
  removeWorker(id: string, reason: string): void {
    const w = this.workers.get(id);
    if (!w) return;
    this.workers.delete(id);
    const t = now();
    for (const jobId of w.jobs) {
      const r = this.running.get(jobId);
      this.running.delete(jobId);
      if (!r || this.stopped) continue;
      this.counters.requeues += 1;
      this.waiting.push({
        id: jobId,
        cls: 'high',
        value: r.job.value,
        enqueuedAt: t,
        task: r.job.task,
        failures: r.failures,
      });
      this.emit({
        lane: 'controller',
        kind: 'requeue',
        t0: t,
        t1: t,
        version: r.job.minVersion,
        meta: { job: jobId, task: r.job.task.id, from: id, reason },
      });
    }
    this.pump();
  }

  /** The trainer died: the batch it was training goes back to the front of the buffer. */
  trainerLost(): void {
    this.trainerReady = false;
    if (this.training) {
      this.buffer.unshift(this.training.drawn.map((d) => ({ key: d.key, item: d.item })));
      this.settled.unshift(...this.training.settled); // marking twice is harmless
      this.lostBatch = this.training.drawn.map((d) => d.item);
      this.lostUndo = this.training.undo;
      this.training = null;
    }
  }

  /**
   * The trainer is back, restarted from the store at `version`. A version newer than ours means
   * the lost step was published (and its samples marked consumed) before the trainer died: its
   * batch is not trained again, and it is reported as the step it was, with `metrics` (what the
   * store kept of them) when given.
   */
  trainerRestored(port: PipelineTrainerPort<B>, version: number, metrics?: StepMetrics): void {
    this.trainer = port;
    this.counters.trainerRestarts += 1;
    if (version > this.version) {
      const trained = this.lostBatch;
      const lost = new Set(trained.map((g) => g.jobId));
      if (this.config.replay.mode === 'fifo') this.buffer.removeWhere((g) => lost.has(g.jobId));
      this.markTrained([...lost]);
      // That step trained its batch: counted as the step would have been.
      this.counters.trainSteps += 1;
      this.counters.trainedEpisodes += trained.reduce((n, g) => n + g.trajectories.length, 0);
      const stale = trained.map((g) => staleness(this.version, g.oldestVersion));
      for (const s of stale)
        this.counters.stalenessHistogram[s] = (this.counters.stalenessHistogram[s] ?? 0) + 1;
      this.version = version;
      if (metrics && trained.length > 0) {
        const trajs = trained.flatMap((g) => g.trajectories);
        const t = now();
        this.hooks.onStep?.({
          version,
          episodes: trajs.length,
          meanReturn: trajs.reduce((a, x) => a + x.return, 0) / trajs.length,
          success: trajs.filter((x) => x.solved).length / trajs.length,
          staleness: stale,
          loss: metrics.loss,
          metrics,
          waitMs: 0,
          trainMs: metrics.ms,
          at: t,
        });
      }
    } else {
      // The lost step was not published: its draw never happened (in prioritized mode its groups
      // are not trained, and the new groups it took count again towards the next batch).
      for (const k of this.lostUndo.marked) this.trainedKeys.delete(k);
      this.fresh += this.lostUndo.fresh;
    }
    this.lostBatch = [];
    this.lostUndo = { marked: [], fresh: 0 };
    this.trainerReady = true;
    this.lastTrainEnd = now();
    this.pump();
  }

  /** Periodic work: preemption after the wait bound. */
  tick(): void {
    this.pump();
  }

  private emit(e: TimelineEvent): void {
    this.hooks.emit?.(e);
  }

  private fail(message: string): void {
    this.stop();
    this.hooks.onError?.(message);
  }

  private pump(): void {
    if (this.stopped) return;
    this.maybeTrain();
    this.admit();
    this.maybePreempt();
  }

  private freeWorker(): WorkerEntry<T> | undefined {
    let best: WorkerEntry<T> | undefined;
    for (const w of this.workers.values()) {
      if (w.jobs.size >= w.slots) continue;
      if (!best || w.jobs.size < best.jobs.size) best = w;
    }
    return best;
  }

  private admit(): void {
    for (;;) {
      const capacity = admissionCapacity(
        { version: this.version, accepted: this.accepted, running: this.running.size },
        { maxConcurrent: this.maxConcurrent, eta: this.config.eta, batch: this.config.batchGroups },
      );
      if (capacity <= 0) return;
      const worker = this.freeWorker();
      if (!worker) return;
      const queued = this.waiting.shift();
      if (queued) {
        this.launch(worker, queued.task, queued.cls, queued.value, queued.id, queued.failures);
      } else {
        const { task, cls, value } = this.source.nextTask();
        this.launch(worker, task, cls, value, this.nextJobId++, 0);
      }
    }
  }

  private launch(
    worker: WorkerEntry<T>,
    task: Task,
    cls: JobClass,
    value: number,
    jobId: number,
    failures: number,
  ): void {
    const samples = this.config.groupSize;
    const job: RolloutJob = {
      jobId,
      runId: this.runId,
      task,
      samples,
      minVersion: this.version,
      seqBase: this.nextSeq,
      seed: this.config.seed * 100_003 + jobId,
      env: this.config.env,
      relabelMaxAbs: this.config.relabelMaxAbs,
      relabelMutations: this.config.relabelMutations,
      cls,
      value,
    };
    this.nextSeq += samples;
    this.running.set(jobId, { job, workerId: worker.id, startedAt: now(), failures });
    worker.jobs.add(jobId);
    this.counters.startedGroups += 1;
    worker.port.play(job).then(
      (group) => this.played(job, worker, group),
      (err: unknown) => this.playFailed(job, worker, err),
    );
  }

  /** Is `job` still running on `worker` (not preempted, requeued or stopped meanwhile)? */
  private owns(job: RolloutJob, worker: WorkerEntry<T>): Running | undefined {
    const r = this.running.get(job.jobId);
    return r && r.job === job && this.workers.get(worker.id) === worker ? r : undefined;
  }

  private played(job: RolloutJob, worker: WorkerEntry<T>, group: PlayedGroup<T>): void {
    if (!this.owns(job, worker)) return;
    this.running.delete(job.jobId);
    worker.jobs.delete(job.jobId);
    if (group.status === 'done') {
      this.accepted += 1;
      this.fresh += 1;
      this.counters.generatedEpisodes += group.trajectories.length;
      this.counters.interrupts += group.interrupted;
      this.source.record(group);
      // A full buffer pushes out its oldest groups (unbounded η): one never trained on is like a
      // stale drop, counted as an overflow.
      for (const g of this.buffer.add(group.jobId, group)) {
        if (this.leftUntrained(g)) this.counters.replayOverflow += 1;
      }
    }
    this.pump();
  }

  private playFailed(job: RolloutJob, worker: WorkerEntry<T>, err: unknown): void {
    const r = this.owns(job, worker);
    if (!r) return;
    this.running.delete(job.jobId);
    worker.jobs.delete(job.jobId);
    const message = errorMessage(err);
    const tries = r.failures + 1;
    if (tries > this.config.maxJobFailures) {
      this.fail(
        this.source.describeFailure?.(job.task, tries, message) ??
          `rollout of task ${job.task.id} failed ${tries === 1 ? 'once' : `${tries} times`}: ${message}`,
      );
      return;
    }
    this.counters.requeues += 1;
    this.waiting.push({
      id: job.jobId,
      cls: 'high',
      value: job.value,
      enqueuedAt: now(),
      task: job.task,
      failures: r.failures + 1,
    });
    this.pump();
  }

  private maybePreempt(): void {
    if (this.freeWorker()) return;
    const t = now();
    const list = [...this.running.values()].map((r) => ({
      id: r.job.jobId,
      cls: r.job.cls,
      value: r.job.value,
      startedAt: r.startedAt,
      r,
    }));
    const victim = preemptionVictim(this.waiting.peek(), list, t, this.config.preemptAfterMs);
    if (!victim) return;
    const { r } = victim;
    const worker = this.workers.get(r.workerId);
    this.running.delete(r.job.jobId);
    worker?.jobs.delete(r.job.jobId);
    void worker?.port.abort(r.job.jobId);
    this.counters.preemptions += 1;
    this.emit({
      lane: worker?.lane ?? 'controller',
      kind: 'preempt',
      t0: t,
      t1: t,
      version: r.job.minVersion,
      meta: { job: r.job.jobId, task: r.job.task.id, value: Number(r.job.value.toFixed(3)) },
    });
    this.admit();
  }

  /**
   * A group left the buffer (stale, or pushed out): one never trained on leaves `accepted` (its
   * slot under the staleness bound is free again) and its samples are marked consumed with the
   * next version; true for such a group. A trained one just retires (false).
   */
  private leftUntrained(g: PlayedGroup<T>): boolean {
    if (this.trainedKeys.delete(g.jobId)) return false;
    this.accepted -= 1;
    this.settled.push(...g.seqs);
    return true;
  }

  /**
   * Prioritized mode keeps trained groups: it remembers which they are (`trainedKeys`), from the
   * draw on (a group pushed out while its step computes was trained). Returns the keys it added.
   */
  private markTrained(keys: readonly number[]): number[] {
    if (this.config.replay.mode !== 'prioritized') return [];
    const added = keys.filter((k) => !this.trainedKeys.has(k));
    for (const k of added) this.trainedKeys.add(k);
    return added;
  }

  private maybeTrain(): void {
    if (!this.trainerReady || this.training) return;
    const { eta, batchGroups: B } = this.config;
    const t = now();
    const dropped = this.buffer.removeWhere((g) => isStale(this.version, g.oldestVersion, eta));
    for (const g of dropped) {
      if (!this.leftUntrained(g)) continue; // a trained group ages out of the prioritized buffer
      this.counters.staleDrops += 1;
      this.counters.staleDroppedEpisodes += g.trajectories.length;
      this.emit({
        lane: 'trainer',
        kind: 'stale-drop',
        t0: t,
        t1: t,
        version: this.version,
        meta: { job: g.jobId, oldest: g.oldestVersion, staleness: staleness(this.version, g.oldestVersion) },
      });
    }
    if (this.config.replay.mode === 'prioritized' && this.fresh < B) return;
    const drawn = this.buffer.draw(B, this.rng);
    if (!drawn) return;
    const undo = { marked: this.markTrained(drawn.map((d) => d.key)), fresh: Math.min(this.fresh, B) };
    this.fresh -= undo.fresh;
    const groups = drawn.map((d) => d.item);
    let made: ReturnType<JobSource<B, T>['batch']>;
    try {
      made = this.source.batch(
        groups,
        drawn.map((d) => d.weight),
      );
    } catch (err) {
      this.fail(`could not build a training batch: ${errorMessage(err)}`);
      return;
    }
    const fromVersion = this.version;
    const settled = this.settled;
    this.settled = [];
    this.training = { drawn, fromVersion, since: t, settled, undo };
    const waitMs = t - this.lastTrainEnd;
    // The version marks its batch consumed, and with it the groups dropped since the last one.
    const seqs = [...settled, ...groups.flatMap((g) => g.seqs)];
    const port = this.trainer;
    port.trainAndPublish(made.batch, { fromVersion, seqs }).then(
      (out) => {
        if (this.trainer !== port || this.training?.drawn !== drawn) return; // lost and restored meanwhile
        this.training = null;
        const end = now();
        this.counters.trainerBusyMs += end - t;
        this.lastTrainEnd = end;
        this.counters.trainSteps += 1;
        const stale = groups.map((g) => staleness(fromVersion, g.oldestVersion));
        for (const s of stale)
          this.counters.stalenessHistogram[s] = (this.counters.stalenessHistogram[s] ?? 0) + 1;
        const trajs = groups.flatMap((g) => g.trajectories);
        this.counters.trainedEpisodes += trajs.length;
        drawn.forEach((d, i) => this.buffer.setPriority(d.key, made.priorities[i] ?? 0));
        this.version = out.version;
        this.hooks.onStep?.({
          version: out.version,
          episodes: trajs.length,
          meanReturn: trajs.reduce((a, x) => a + x.return, 0) / Math.max(1, trajs.length),
          success: trajs.filter((x) => x.solved).length / Math.max(1, trajs.length),
          staleness: stale,
          loss: out.metrics.loss,
          metrics: out.metrics,
          waitMs,
          trainMs: end - t,
          at: end,
        });
        this.pump();
      },
      (err: unknown) => {
        if (this.trainer !== port || this.training?.drawn !== drawn) return;
        this.trainerLost();
        this.fail(`training step failed: ${errorMessage(err)}`);
      },
    );
  }
}
