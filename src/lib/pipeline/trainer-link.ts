/**
 * The trainer side of the pipeline controller (DESIGN §5, §6): it feeds the trainer a batch
 * whenever it is idle and one is ready (dropping stale samples first), counts and reports each
 * step, and puts a lost step's batch back when the trainer dies.
 */
import { errorMessage } from '../errors';
import type { StepMetrics } from '../policy/metrics';
import type { Rng } from '../random';
import type { Drawn } from '../rl/replay';
import type { JobSource, PipelineConfig, PipelineCounters, PipelineHooks } from './controller-types';
import { now } from './events';
import type { DrawUndo, ReplayFeed } from './replay-feed';
import { staleness } from './staleness';
import { countTrained, stepReport, successOf } from './step-report';
import type { EpisodeOutcome, PipelineTrainerPort, PlayedGroup } from './types';

/** What the trainer link reads and changes of its pipeline. */
export interface TrainerLinkHost<B, T extends EpisodeOutcome> {
  readonly config: PipelineConfig;
  readonly counters: PipelineCounters;
  readonly feed: ReplayFeed<T>;
  readonly source: JobSource<B, T>;
  readonly rng: Rng;
  readonly hooks: PipelineHooks<T>;
  /** The latest published version. */
  version(): number;
  /** A step published `version`. */
  published(version: number): void;
  /** Stops the run with `message`. */
  fail(message: string): void;
  /** Schedules again: a step ended, so rollouts may start and the next batch may be ready. */
  pump(): void;
}

/** The pipeline's link to its trainer: at most one step in progress. */
export class TrainerLink<B, T extends EpisodeOutcome> {
  /** The trainer takes batches: false before the pipeline starts, and while the trainer is lost. */
  ready = false;
  private training: {
    drawn: Drawn<PlayedGroup<T>>[];
    fromVersion: number;
    since: number;
    settled: number[];
    /** What the draw changed, undone when the step is lost. */
    undo: DrawUndo;
  } | null = null;
  private lastTrainEnd: number;

  constructor(
    private port: PipelineTrainerPort<B>,
    private readonly host: TrainerLinkHost<B, T>,
    private readonly startedAt: number,
  ) {
    this.lastTrainEnd = startedAt;
  }

  /** The step the trainer is computing, if any: how many episodes it trains on. */
  get inFlight(): { episodes: number } | null {
    if (!this.training) return null;
    return { episodes: this.training.drawn.reduce((n, d) => n + d.item.trajectories.length, 0) };
  }

  /** Resolves once the trainer has no step in progress, or after `timeoutMs`. */
  async idle(timeoutMs: number): Promise<void> {
    const until = now() + timeoutMs;
    while (this.training && now() < until) await new Promise((r) => setTimeout(r, 20));
  }

  /** Fraction of wall time since start the trainer spent computing. */
  busyFraction(at: number): number {
    const busyNow = this.training ? Math.max(0, at - this.training.since) : 0;
    return (this.host.counters.trainerBusyMs + busyNow) / Math.max(1, at - this.startedAt);
  }

  /** The trainer died: the batch it was training goes back to the front of the buffer. */
  lost(): void {
    this.ready = false;
    if (this.training) {
      this.host.feed.lose(this.training.drawn, this.training.settled, this.training.undo);
      this.training = null;
    }
  }

  /**
   * The trainer is back, restarted from the store at `version`. A version newer than ours means
   * the lost step was published (and its samples marked consumed) before the trainer died: its
   * batch is not trained again, and it is reported as the step it was, with `metrics` (what the
   * store kept of them) when given.
   */
  restored(port: PipelineTrainerPort<B>, version: number, metrics?: StepMetrics): void {
    const { counters, hooks } = this.host;
    this.port = port;
    counters.trainerRestarts += 1;
    const published = version > this.host.version();
    const trained = this.host.feed.restore(published);
    if (published) {
      // That step trained its batch: counted as the step would have been.
      const stale = countTrained(counters, trained, this.host.version(), this.host.feed.ledger);
      this.host.published(version);
      if (metrics && trained.length > 0) {
        const report = { waitMs: 0, trainMs: metrics.ms, at: now() };
        hooks.onStep?.(stepReport(version, trained, stale, metrics, report));
      }
    }
    this.ready = true;
    this.lastTrainEnd = now();
    this.host.pump();
  }

  /** Drops stale groups, then starts a step if the trainer is idle and a batch is ready. */
  maybeTrain(): void {
    if (!this.ready || this.training) return;
    const { counters, feed, hooks } = this.host;
    const version = this.host.version();
    const t = now();
    const { eta, playLag = 0 } = this.host.config;
    for (const g of feed.dropStale(version, eta + playLag)) {
      counters.staleDrops += 1;
      counters.staleDroppedEpisodes += g.trajectories.length;
      hooks.emit?.({
        lane: 'trainer',
        kind: 'stale-drop',
        t0: t,
        t1: t,
        version,
        meta: { job: g.jobId, oldest: g.oldestVersion, staleness: staleness(version, g.oldestVersion) },
      });
    }
    const draw = feed.draw(this.host.rng);
    if (!draw) return;
    const { drawn, undo } = draw;
    const groups = drawn.map((d) => d.item);
    let made: ReturnType<JobSource<B, T>['batch']>;
    try {
      made = this.host.source.batch(
        groups,
        drawn.map((d) => d.weight),
      );
    } catch (err) {
      this.host.fail(`could not build a training batch: ${errorMessage(err)}`);
      return;
    }
    const fromVersion = version;
    const settled = feed.takeSettled();
    this.training = { drawn, fromVersion, since: t, settled, undo };
    const waitMs = t - this.lastTrainEnd;
    // The version marks its batch consumed, and with it the groups dropped since the last one.
    const seqs = [...settled, ...groups.flatMap((g) => g.seqs)];
    const port = this.port;
    port.trainAndPublish(made.batch, { fromVersion, seqs, performance: successOf(groups) }).then(
      (out) => {
        if (this.port !== port || this.training?.drawn !== drawn) return; // lost and restored meanwhile
        this.training = null;
        const end = now();
        counters.trainerBusyMs += end - t;
        this.lastTrainEnd = end;
        const stale = countTrained(counters, groups, fromVersion, feed.ledger);
        drawn.forEach((d, i) => feed.buffer.setPriority(d.key, made.priorities[i] ?? 0));
        this.host.published(out.version);
        const times = { waitMs, trainMs: end - t, at: end };
        hooks.onStep?.(stepReport(out.version, groups, stale, out.metrics, times, out.strategy));
        this.host.pump();
      },
      (err: unknown) => {
        if (this.port !== port || this.training?.drawn !== drawn) return;
        this.lost();
        this.host.fail(`training step failed: ${errorMessage(err)}`);
      },
    );
  }
}
