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

  constructor(private readonly workload: Workload<Batch>) {}

  /** Publishes the trainer's starting weights as version 0, so both sides hold the same policy. */
  async start(): Promise<void> {
    await this.workload.publish(0);
    this.version = 0;
  }

  async iterate(): Promise<IterationReport> {
    if (this.version < 0) await this.start();
    const t0 = performance.now();
    const { batch, stats } = await this.workload.collect(this.iteration);
    const t1 = performance.now();
    const collectedWith = this.version;
    const { loss } = await this.workload.train(batch, collectedWith);
    await this.workload.publish(this.version + 1);
    this.version += 1;
    this.iteration += 1;
    return {
      iteration: this.iteration,
      collectedWith,
      published: this.version,
      stats,
      loss,
      rolloutMs: t1 - t0,
      trainMs: performance.now() - t1,
    };
  }
}
