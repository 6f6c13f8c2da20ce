import type { MlpSnapshot } from '../policy/mlp';
import type { CustomBatch } from '../rl/custom-trainer';
import type { BatchStats, Workload } from './sync-loop';

/** What the custom-env workload needs from a rollout worker holding the environment. */
export interface CustomRolloutPort {
  collectCustom(episodes: number, gamma: number): Promise<CustomBatch>;
  loadCustomPolicy(snapshot: MlpSnapshot, version: number): Promise<void>;
}

/** What it needs from the trainer worker holding the MLP. */
export interface CustomTrainerPort {
  trainCustom(batch: CustomBatch, version: number): Promise<number>;
  exportCustomPolicy(): Promise<MlpSnapshot>;
}

/** A custom JS environment as loop work: episodes played by the MLP in the rollout worker. */
export class CustomWorkload implements Workload<CustomBatch> {
  constructor(
    private readonly rollout: CustomRolloutPort,
    private readonly trainer: CustomTrainerPort,
    private readonly episodesPerIteration: number,
    /** Discount of the returns-to-go the rollout side computes. */
    private readonly gamma: number,
  ) {}

  async publish(version: number): Promise<void> {
    await this.rollout.loadCustomPolicy(await this.trainer.exportCustomPolicy(), version);
  }

  async collect(): Promise<{ batch: CustomBatch; stats: BatchStats }> {
    const batch = await this.rollout.collectCustom(this.episodesPerIteration, this.gamma);
    const r = batch.episodeReturns;
    return {
      batch,
      stats: {
        episodes: r.length,
        meanReturn: r.reduce((a, b) => a + b, 0) / Math.max(1, r.length),
        success: null,
      },
    };
  }

  async train(batch: CustomBatch, version: number): Promise<{ loss: number }> {
    return { loss: await this.trainer.trainCustom(batch, version) };
  }
}
