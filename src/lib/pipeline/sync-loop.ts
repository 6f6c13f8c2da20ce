import { now, type TimelineEvent } from './events';

/** What one batch of episodes came to. */
export interface BatchStats {
  episodes: number;
  meanReturn: number;
  /** Fraction of episodes that solved their task (null where there is no notion of solving). */
  success: number | null;
}

/**
 * One kind of training work the loop drives (the code-writing env, a custom JS env): how to
 * publish weights from the trainer to the rollout side, collect a batch there, and train on it.
 */
export interface Workload<Batch> {
  /** Publishes the trainer's current weights as `version`; the rollout side adopts them. */
  publish(version: number): Promise<void>;
  /** Rollout side: one batch of episodes with the current version. */
  collect(iteration: number): Promise<{ batch: Batch; stats: BatchStats }>;
  /** Trainer side: one update on the batch, collected with `version`; returns its loss. */
  train(batch: Batch, version: number): Promise<{ loss: number }>;
}

/** What one iteration did, for the page's charts. */
export interface IterationReport {
  iteration: number;
  /** Version the batch was collected with, and the version published after the update. */
  collectedWith: number;
  published: number;
  stats: BatchStats;
  loss: number;
  rolloutMs: number;
  trainMs: number;
}

/**
 * The synchronous training loop (η = 0): collect a batch with the current version, update,
 * publish the next version, repeat. The async pipeline of issue 6 generalises exactly this loop.
 */
export class SyncLoop<Batch> {
  iteration = 0;
  version = -1;

  /**
   * `emit` receives the loop's spans for the timeline (DESIGN §9), on the pipeline's lanes: the
   * batch collected on `rollout-0`, the update on `trainer`, each publish on `store`.
   */
  constructor(
    private readonly workload: Workload<Batch>,
    private readonly emit: (e: TimelineEvent) => void = () => undefined,
  ) {}

  /** Publishes the trainer's starting weights as version 0, so both sides hold the same policy. */
  async start(): Promise<void> {
    await this.publish(0);
    this.version = 0;
  }

  private async publish(version: number): Promise<void> {
    const t0 = now();
    await this.workload.publish(version);
    this.emit({ lane: 'store', kind: 'publish', t0, t1: now(), version });
  }

  async iterate(): Promise<IterationReport> {
    if (this.version < 0) await this.start();
    const t0 = now();
    const { batch, stats } = await this.workload.collect(this.iteration);
    const t1 = now();
    const collectedWith = this.version;
    this.emit({
      lane: 'rollout-0',
      kind: 'episode',
      t0,
      t1,
      version: collectedWith,
      meta: { episodes: stats.episodes, meanReturn: stats.meanReturn },
    });
    const { loss } = await this.workload.train(batch, collectedWith);
    const t2 = now();
    this.emit({
      lane: 'trainer',
      kind: 'train-step',
      t0: t1,
      t1: t2,
      version: collectedWith,
      meta: { loss },
    });
    await this.publish(this.version + 1);
    this.version += 1;
    this.iteration += 1;
    return {
      iteration: this.iteration,
      collectedWith,
      published: this.version,
      stats,
      loss,
      rolloutMs: t1 - t0,
      trainMs: t2 - t1,
    };
  }
}
