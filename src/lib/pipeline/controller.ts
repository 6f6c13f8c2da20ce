import { errorMessage } from '../errors';
import type { TokenBatch } from '../rl/batch';
import { Rng } from '../random';
import type { ReplayBuffer } from '../rl/replay';
import { now, type Lane, type TimelineEvent } from './events';
import {
  emptyCounters,
  runCounters,
  type JobSource,
  type PipelineConfig,
  type PipelineCounters,
  type PipelineHooks,
  type QueuedJob as Queued,
  type RestoredRun,
  type RunningJob as Running,
  type WorkerEntry,
} from './controller-types';
import { HoldControl } from './hold';
import type { SeqLedger } from './ledger';
import { ReplayFeed } from './replay-feed';
import {
  CostEstimates,
  fitsBudget,
  jobOrder,
  overBudget,
  preemptionVictim,
  rewardVictim,
  WaitingQueue,
} from './scheduler';
import { SlotBoard, type SlotState, type SlotStretch, type SlotView } from './slots';
import { admissionCapacity, slotsHeldByEta } from './staleness';
import { TrainerLink, type TrainerLinkHost } from './trainer-link';
import type { Trajectory } from '../rl/trajectory';
import type { StepMetrics } from '../policy/metrics';
import type {
  EpisodeOutcome,
  JobCost,
  KeptPrefix,
  PipelineTrainerPort,
  PlayedGroup,
  RolloutJob,
  RolloutPort,
} from './types';

export { runCounters, type JobSource, type PipelineConfig, type PipelineCounters, type PipelineHooks };

/**
 * The controller of the asynchronous pipeline (main thread). It admits jobs under the staleness
 * bound into free rollout slots, ordered by class and learning value, preempts when a
 * higher-class job waits too long (or, under `expected-reward`, a better one waits), the victim
 * keeping what it played to resume from; collects finished groups into the replay buffer, feeds the
 * trainer a batch whenever it is idle and one is ready (dropping stale samples), and requeues
 * the work of a worker that died; Pause and Step hold new work (`hold`). With η = 0 this is
 * exactly the synchronous loop. `B` is the trainer's batch and `T` an episode's data (token
 * batches and trajectories by default).
 */
export class Pipeline<B = TokenBatch, T extends EpisodeOutcome = Trajectory> {
  /** Latest published version: jobs admitted now run at least this version. */
  version: number;
  readonly counters: PipelineCounters = emptyCounters();
  readonly buffer: ReplayBuffer<PlayedGroup<T>>;
  private readonly feed: ReplayFeed<T>;
  private readonly workers = new Map<string, WorkerEntry<T>>();
  private readonly running = new Map<number, Running>();
  /** Expected cost per episode of each task (the slots' budgets, `PipelineConfig.budget`). */
  private readonly costs = new CostEstimates();
  /** Jobs counted as waiting for a budget (each once). */
  private readonly budgetHeld = new Set<number>();
  /** Preempted jobs whose worker has not yet handed back what they played. */
  private readonly suspending = new Map<number, { r: Running; worker: WorkerEntry<T> }>();
  private readonly waiting: WaitingQueue<Queued>;
  /** Each worker's slots and their states (`slots.ts`): bookkeeping only, it decides nothing. */
  private readonly slotBoard = new SlotBoard();
  private readonly rng: Rng;
  private nextJobId: number;
  private nextSeq: number;
  private readonly link: TrainerLink<B, T>;
  private stopped = false;
  /** Jobs running (or being preempted) when the run stopped: a group of theirs may still arrive. */
  private readonly inFlightAtStop = new Set<RolloutJob>();
  /** Pause, Resume and Step (`hold.ts`): whether new rollout jobs and batches may start. */
  readonly hold = new HoldControl(this, (view) => this.hooks.onHold?.(view));
  private timer: ReturnType<typeof setInterval> | undefined;
  readonly startedAt = now();

  constructor(
    readonly config: PipelineConfig,
    private readonly source: JobSource<B, T>,
    trainer: PipelineTrainerPort<B>,
    readonly runId: string,
    private readonly hooks: PipelineHooks<T> = {},
    /** Where a resumed run stands: its latest version, next keys, and unconsumed groups. */
    restored: RestoredRun<T> = { version: 0, nextSeq: 0, nextJobId: 0, groups: [] },
  ) {
    if (!(config.eta >= 0)) throw new Error(`η must be ≥ 0 (or Infinity), got ${config.eta}`);
    for (const k of ['batchGroups', 'groupSize', 'slotsPerWorker'] as const) {
      if (!Number.isInteger(config[k]) || config[k] < 1)
        throw new Error(`pipeline ${k} must be a positive integer, got ${config[k]}`);
    }
    this.rng = new Rng(config.seed);
    this.waiting = new WaitingQueue<Queued>(jobOrder(config.schedule ?? 'learning-value'));
    this.feed = new ReplayFeed(config, this.counters, restored);
    this.buffer = this.feed.buffer;
    this.version = restored.version;
    this.nextSeq = restored.nextSeq;
    this.nextJobId = restored.nextJobId;
    const host: TrainerLinkHost<B, T> = {
      config,
      counters: this.counters,
      feed: this.feed,
      source,
      rng: this.rng,
      hooks,
      version: () => this.version,
      published: (version) => (this.version = version),
      fail: (message) => this.fail(message),
      pump: () => this.pump(),
    };
    this.link = new TrainerLink(trainer, host, this.startedAt);
  }

  /** Starts scheduling; `tickMs` > 0 runs the preemption check on a timer (0: call `tick()` yourself). */
  start(tickMs = 100): void {
    if (this.stopped) return; // a stopped pipeline stays stopped: no timer to outlive it
    this.link.ready = true;
    if (tickMs > 0) this.timer = setInterval(() => this.tick(), tickMs);
    this.pump();
  }

  /** Stops admitting work and aborts running jobs; the trainer's step in progress finishes. */
  stop(): void {
    if (!this.stopped) this.drawStretches(this.slotBoard.stopAll(now()));
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    for (const r of this.running.values()) this.inFlightAtStop.add(r.job);
    for (const { r } of this.suspending.values()) this.inFlightAtStop.add(r.job);
    for (const [jobId, r] of this.running) void this.workers.get(r.workerId)?.port.abort(jobId);
    this.running.clear();
    this.suspending.clear();
    for (const w of this.workers.values()) w.jobs.clear();
    this.waiting.clear();
  }

  /** Resolves once the trainer has no step in progress (a stopped run waits for it before closing). */
  async trainerIdle(timeoutMs = 120_000): Promise<void> {
    await this.link.idle(timeoutMs);
  }

  /**
   * Seqs of groups dropped untrained since the last batch (a stopped run marks them consumed, so
   * that a resume does not bring them back to drop and count them again); clears them.
   */
  takeSettled(): number[] {
    return this.feed.takeSettled();
  }

  /** The session's episodes by seq: written, trained, stale-dropped, pushed out (`ledger.ts`). */
  get ledger(): SeqLedger {
    return this.feed.ledger;
  }

  /** Groups finished and kept for training (stale drops excluded). */
  get accepted(): number {
    return this.feed.accepted;
  }

  /** The step the trainer is computing, if any: how many episodes it trains on. */
  get inFlight(): { episodes: number } | null {
    return this.link.inFlight;
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

  /**
   * Jobs waiting for a slot: requeued after a failure, preempted, and (with `queueAhead`) new
   * jobs drawn ahead.
   */
  get waitingGroups(): number {
    return this.waiting.size + this.suspending.size;
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

  /** Every live slot: its state, job and figures (completed, preempted, failed, mean reward, busy ms). */
  slots(at = now()): SlotView[] {
    return this.slotBoard.views(at);
  }

  /** Live slots per state. */
  get slotCounts(): Record<SlotState, number> {
    return this.slotBoard.counts();
  }

  /** Fraction of wall time since start the trainer spent computing. */
  trainerBusyFraction(at = now()): number {
    return this.link.busyFraction(at);
  }

  /** Adds a live rollout worker with free slots. */
  addWorker(id: string, port: RolloutPort<T>, lane: Lane): void {
    if (this.workers.has(id)) throw new Error(`worker ${id} is already in the pipeline`);
    this.workers.set(id, { id, lane, port, slots: this.config.slotsPerWorker, jobs: new Set() });
    this.slotBoard.addWorker(id, lane, this.config.slotsPerWorker, now());
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
    this.drawStretches(this.slotBoard.removeWorker(id, t));
    const lost = [...w.jobs].flatMap((jobId) => {
      const r = this.running.get(jobId);
      this.running.delete(jobId);
      return r ? [r] : [];
    });
    // A preempted job whose worker died before it handed back its prefix starts over.
    for (const [jobId, s] of this.suspending)
      if (s.worker === w) {
        this.suspending.delete(jobId);
        lost.push(s.r);
      }
    for (const r of lost) {
      const jobId = r.job.jobId;
      if (this.stopped) continue;
      this.requeue(r.job, r.failures, t, r.preemptions);
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
    this.link.lost();
  }

  /**
   * The trainer is back, restarted from the store at `version`. A version newer than ours means
   * the lost step was published (and its samples marked consumed) before the trainer died: its
   * batch is not trained again, and it is reported as the step it was, with `metrics` (what the
   * store kept of them) when given.
   */
  trainerRestored(port: PipelineTrainerPort<B>, version: number, metrics?: StepMetrics): void {
    this.link.restored(port, version, metrics);
  }

  /** Periodic work: preemption after the wait bound. */
  tick(): void {
    this.pump();
  }

  private emit(e: TimelineEvent): void {
    this.hooks.emit?.(e);
  }

  /** The blocked stretches among `left` as spans on their worker's lane (under 1 ms: none). */
  private drawStretches(left: readonly (SlotStretch | null)[]): void {
    for (const s of left) {
      if (s?.state !== 'blocked' || s.t1 - s.t0 < 1) continue;
      this.emit({
        lane: s.lane,
        kind: 'blocked',
        t0: s.t0,
        t1: s.t1,
        version: -1,
        meta: { slot: s.slot, 'held by': `staleness bound η = ${this.config.eta}` },
      });
    }
  }

  private fail(message: string): void {
    this.stop();
    this.hooks.onError?.(message);
  }

  /**
   * η = 0: a version's groups enter the buffer and the source's records in job-id order once the
   * last has finished, so no batch, record or task draw depends on which job finished first.
   */
  private releaseHeld(): void {
    if (this.feed.heldGroups === 0 || this.running.size > 0 || this.suspending.size > 0) return;
    if (this.waiting.some((q) => q.seqBase !== undefined)) return; // this version's work, relaunched
    for (const g of this.feed.release()) this.source.record(g);
  }

  private pump(): void {
    if (this.stopped) return;
    this.releaseHeld();
    if (this.hold.admits()) {
      this.link.maybeTrain();
      this.admit();
      this.drawAhead();
      this.maybePreempt();
    }
    // Free slots: those the staleness bound holds are blocked, the rest (Pause) idle.
    this.drawStretches(this.slotBoard.settle(this.slotsHeldByEta, now()));
    this.hold.report();
  }

  /**
   * The worker with a free slot and the fewest jobs; with `cost` (a job's expected cost per
   * episode), only one whose budget has room for it beside its jobs, or that runs none.
   */
  private freeWorker(cost?: JobCost): WorkerEntry<T> | undefined {
    const budget = this.config.budget;
    let best: WorkerEntry<T> | undefined;
    for (const w of this.workers.values()) {
      if (w.jobs.size >= w.slots) continue;
      if (cost && budget && w.jobs.size > 0) {
        const load = [...w.jobs].flatMap((id) => this.running.get(id)?.cost ?? []);
        if (!fitsBudget(cost, load, w.slots, budget)) continue;
      }
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
      if (capacity <= 0 || !this.freeWorker()) return;
      const head = this.waiting.peek();
      const job = head ?? this.newJob();
      const cost = this.costs.of(job.task.id);
      const worker = this.freeWorker(cost);
      if (!worker) {
        // No budget has room for it now: it waits at its place in the queue for a worker to free up.
        if (!this.budgetHeld.has(job.id)) {
          this.budgetHeld.add(job.id);
          this.counters.budgetWaits += 1;
        }
        if (!head) this.waiting.push(job);
        return;
      }
      if (head) this.waiting.shift();
      this.budgetHeld.delete(job.id);
      this.launch(worker, job, cost);
    }
  }

  /** A new job of the source's next task. */
  private newJob(): Queued {
    const { task, cls, value, expectedReward } = this.source.nextTask();
    return {
      id: this.nextJobId++,
      cls,
      value,
      ...(expectedReward !== undefined ? { expectedReward } : {}),
      enqueuedAt: now(),
      task,
      failures: 0,
      preemptions: 0,
    };
  }

  /** Keeps `queueAhead` new jobs waiting in the ordered queue while every slot is busy. */
  private drawAhead(): void {
    const ahead = this.config.queueAhead ?? 0;
    if (ahead <= 0 || this.workers.size === 0) return;
    while (this.waiting.count((q) => q.seqBase === undefined) < ahead) this.waiting.push(this.newJob());
  }

  private launch(worker: WorkerEntry<T>, queued: Queued, cost: JobCost): void {
    const { task, cls, value, expectedReward, id: jobId, failures, preemptions, resume } = queued;
    const samples = this.config.groupSize;
    const job: RolloutJob = {
      jobId,
      runId: this.runId,
      task,
      samples,
      minVersion: this.version,
      seqBase: queued.seqBase ?? this.nextSeq,
      seed: this.config.seed * 100_003 + jobId,
      env: this.config.env,
      relabelMaxAbs: this.config.relabelMaxAbs,
      relabelMutations: this.config.relabelMutations,
      cls,
      value,
      ...(expectedReward !== undefined ? { expectedReward } : {}),
      ...(resume ? { resume } : {}),
    };
    if (queued.seqBase === undefined) this.nextSeq += samples;
    const startedAt = now();
    this.counters.queueWaitMs += Math.max(0, startedAt - queued.enqueuedAt);
    if (resume) {
      this.counters.resumed += 1;
      this.counters.keptTokens += resume.episodes.reduce((n, e) => n + e.tokens.length, 0);
    }
    this.running.set(jobId, { job, workerId: worker.id, startedAt, failures, preemptions, cost });
    worker.jobs.add(jobId);
    this.drawStretches([this.slotBoard.start(worker.id, jobId, startedAt)]);
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
    if (this.stopped) {
      // Finished as the run stopped, past the abort: the worker stored it, so it counts as
      // written, and it waits unconsumed in the store for a resume.
      if (this.inFlightAtStop.delete(job) && group.status === 'done') this.feed.written(group);
      return;
    }
    const suspended = this.suspending.get(job.jobId);
    if (suspended?.r.job === job && suspended.worker === worker) {
      this.suspending.delete(job.jobId);
      if (group.status !== 'done') {
        // Back in the queue with what it played (a worker that cannot keep it: from the start).
        const r = suspended.r;
        this.requeue(job, r.failures, now(), r.preemptions + 1, group.kept, false);
        this.pump();
        return;
      }
      // It finished before the preemption reached it: taken like any finished group.
    } else if (this.owns(job, worker)) {
      this.running.delete(job.jobId);
      worker.jobs.delete(job.jobId);
    } else return;
    const done = group.status === 'done';
    const returns = done ? group.trajectories.map((tr) => tr.return) : [];
    // A group the worker aborted on its own is lost, not requeued: the slot's job failed.
    if (!suspended) this.slotBoard.finish(job.jobId, done ? 'completed' : 'failed', now(), returns);
    if (done) {
      this.measure(job, group, worker);
      this.counters.generatedEpisodes += group.trajectories.length;
      this.counters.interrupts += group.interrupted;
      this.hooks.onPlayed?.(job, group, worker.lane);
      if (this.config.eta === 0) {
        this.feed.hold(group); // recorded and buffered in job-id order with its version's others
      } else {
        this.source.record(group);
        this.feed.accept(group);
      }
    }
    this.pump();
  }

  /** Records what a finished group cost per episode; one over its slot's budget is an overrun, marked. */
  private measure(job: RolloutJob, group: PlayedGroup<T>, worker: WorkerEntry<T>): void {
    const n = group.trajectories.length;
    if (!group.cost || n === 0) return;
    const perEpisode = { sandboxMs: group.cost.sandboxMs / n, tokens: group.cost.tokens / n };
    this.costs.record(job.task.id, perEpisode);
    const budget = this.config.budget;
    if (!budget || !overBudget(perEpisode, budget)) return;
    this.counters.overruns += 1;
    const t = now();
    this.emit({
      lane: worker.lane,
      kind: 'overrun',
      t0: t,
      t1: t,
      version: group.newestVersion,
      meta: {
        job: job.jobId,
        task: job.task.id,
        'sandbox ms / episode': Number(perEpisode.sandboxMs.toFixed(1)),
        'tokens / episode': Number(perEpisode.tokens.toFixed(1)),
        budget: `${budget.sandboxMs || '∞'} ms, ${budget.tokens || '∞'} tokens`,
      },
    });
  }

  private playFailed(job: RolloutJob, worker: WorkerEntry<T>, err: unknown): void {
    const suspended = this.suspending.get(job.jobId);
    const r = suspended?.r.job === job ? suspended.r : this.owns(job, worker);
    if (!r || this.stopped) return;
    if (suspended) this.suspending.delete(job.jobId);
    else {
      this.running.delete(job.jobId);
      worker.jobs.delete(job.jobId);
      this.slotBoard.finish(job.jobId, 'failed', now());
    }
    const message = errorMessage(err);
    const tries = r.failures + 1;
    if (tries > this.config.maxJobFailures) {
      this.fail(
        this.source.describeFailure?.(job.task, tries, message) ??
          `rollout of task ${job.task.id} failed ${tries === 1 ? 'once' : `${tries} times`}: ${message}`,
      );
      return;
    }
    this.requeue(job, r.failures + 1, now(), r.preemptions);
    this.pump();
  }

  /**
   * Puts `job` back in the queue at the highest class (its next try starts before new work), with
   * what it played when it was preempted; `fault`: counted as a requeue after a failure.
   */
  private requeue(
    job: RolloutJob,
    failures: number,
    t: number,
    preemptions: number,
    resume?: KeptPrefix,
    fault = true,
  ): void {
    if (fault) this.counters.requeues += 1;
    this.waiting.push({
      id: job.jobId,
      cls: 'high',
      value: job.value,
      ...(job.expectedReward !== undefined ? { expectedReward: job.expectedReward } : {}),
      enqueuedAt: t,
      task: job.task,
      failures,
      seqBase: job.seqBase,
      preemptions,
      ...(resume ? { resume } : {}),
    });
  }

  /**
   * Preempts a running job for the first waiting one: by class after the wait bound, or under
   * `expected-reward` by its margin. The victim is set aside with what it played and goes back in
   * the queue at the highest class once its worker hands that over. Bounds: a job is preempted
   * at most once, and a job waiting to resume never preempts (no ping-pong, no starvation).
   */
  private maybePreempt(): void {
    if (this.freeWorker()) return;
    const waiting = this.waiting.peek();
    if (!waiting || waiting.resume) return;
    const t = now();
    const list = [...this.running.values()]
      .filter((r) => r.preemptions === 0)
      .map((r) => ({
        id: r.job.jobId,
        cls: r.job.cls,
        value: r.job.value,
        ...(r.job.expectedReward !== undefined ? { expectedReward: r.job.expectedReward } : {}),
        startedAt: r.startedAt,
        r,
      }));
    const bound = this.config.preemptAfterMs;
    const byClass = waiting.preemptions === 0 ? preemptionVictim(waiting, list, t, bound) : null;
    const margin =
      this.config.schedule === 'expected-reward' ? (this.config.preemptMargin ?? Infinity) : Infinity;
    const victim = byClass ?? rewardVictim(waiting, list, t, bound, margin);
    if (!victim) return;
    const { r } = victim;
    const worker = this.workers.get(r.workerId);
    if (!worker) return;
    this.running.delete(r.job.jobId);
    worker.jobs.delete(r.job.jobId);
    this.suspending.set(r.job.jobId, { r, worker });
    this.slotBoard.finish(r.job.jobId, 'preempted', t);
    void worker.port.abort(r.job.jobId, true);
    this.counters.preemptions += 1;
    this.emit({
      lane: worker.lane,
      kind: 'preempt',
      t0: t,
      t1: t,
      version: r.job.minVersion,
      meta: {
        job: r.job.jobId,
        task: r.job.task.id,
        for: waiting.id,
        ...(byClass
          ? { reason: `class ${waiting.cls}`, value: Number(r.job.value.toFixed(3)) }
          : {
              reason: 'expected reward',
              expected: Number((r.job.expectedReward ?? 0).toFixed(3)),
              waiting: Number((waiting.expectedReward ?? 0).toFixed(3)),
            }),
      },
    });
    this.admit();
  }
}
