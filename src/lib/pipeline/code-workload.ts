import { DEFAULT_ENV_CONFIG, type EnvConfig } from '../env/config';
import { Curriculum, DEFAULT_CURRICULUM, type CurriculumConfig } from '../env/curriculum';
import type { Task } from '../env/suite';
import type { StepMetrics } from '../policy/trainer';
import type { Checkpoint } from '../policy/weights';
import { grpoAdvantages, rlooAdvantages } from '../rl/advantages';
import type { TokenBatch } from '../rl/batch';
import { Rng } from '../rl/random';
import { gaeAdvantages, trajectoryBatch, type Trajectory } from '../rl/trajectory';
import type { BatchStats, Workload } from './sync-loop';

/** What the code workload needs from a rollout worker (its bridge's API). */
export interface RolloutPort {
  collect(req: { tasks: Task[]; samples: number; config?: EnvConfig; seed: number }): Promise<Trajectory[]>;
  loadPolicy(checkpoint: Checkpoint, version: number): Promise<void>;
}

/** What the code workload needs from the trainer worker (its bridge's API). */
export interface TrainerPort {
  trainBatch(batch: TokenBatch, version: number): Promise<StepMetrics>;
  /** Full weights when `full`, else what the trainer publishes (only adapters under LoRA). */
  exportPolicy(full: boolean): Promise<Checkpoint>;
}

/** Settings of a training run of the code-writing policy. */
export interface CodeRunConfig {
  /** Distinct tasks per batch. */
  tasksPerBatch: number;
  /** Episodes per task in a batch (the group of GRPO and RLOO). */
  groupSize: number;
  /** Advantage estimator: group-relative outcome (RLOO, GRPO) or per-token GAE with the value head. */
  estimator: 'rloo' | 'grpo' | 'gae';
  /** GAE discount γ and λ (estimator `gae`). */
  gamma: number;
  lambda: number;
  /**
   * Optimiser steps per batch (PPO epochs). After the first, π_θ moves away from π_behav and
   * the clip bounds each token's ratio; π_prox is recomputed before every step.
   */
  updatesPerBatch: number;
  /** Adam learning rate of the run (set on the trainer, with a fresh optimiser state, at start). */
  learningRate: number;
  /** Batch length in tokens: the policy's context. */
  contextLength: number;
  env: EnvConfig;
  curriculum: CurriculumConfig;
  /** Seed of task sampling and of the rollout's sampling stream. */
  seed: number;
}

export const DEFAULT_CODE_RUN: CodeRunConfig = {
  tasksPerBatch: 4,
  groupSize: 4,
  estimator: 'rloo',
  updatesPerBatch: 2,
  learningRate: 1e-2,
  gamma: 1,
  lambda: 0.95,
  contextLength: 64,
  env: DEFAULT_ENV_CONFIG,
  curriculum: DEFAULT_CURRICULUM,
  seed: 1,
};

/**
 * The code-writing environment as loop work: tasks from the curriculum's level, a group of
 * episodes per task, group-relative advantages on the policy's own tokens.
 */
export class CodeWorkload implements Workload<TokenBatch> {
  readonly curriculum: Curriculum;
  /** Metrics of the last update (the page shows them). */
  lastMetrics: StepMetrics | null = null;
  private readonly rng: Rng;

  constructor(
    private readonly rollout: RolloutPort,
    private readonly trainer: TrainerPort,
    private readonly trainTasks: readonly Task[],
    readonly config: CodeRunConfig = DEFAULT_CODE_RUN,
  ) {
    if (trainTasks.length === 0) throw new Error('no training tasks');
    this.curriculum = new Curriculum(config.curriculum);
    this.rng = new Rng(config.seed);
  }

  /** Version 0 is published in full (a LoRA run's base); later versions as the trainer exports them. */
  async publish(version: number): Promise<void> {
    await this.rollout.loadPolicy(await this.trainer.exportPolicy(version === 0), version);
  }

  /** Tasks for the next batch: distinct when the level has enough, drawn by the run's seed. */
  pickTasks(): Task[] {
    const pool = [...this.curriculum.tasksFor(this.trainTasks)];
    const out: Task[] = [];
    while (out.length < this.config.tasksPerBatch && pool.length > 0) {
      out.push(pool.splice(this.rng.int(pool.length), 1)[0] as Task);
    }
    while (out.length < this.config.tasksPerBatch) out.push(out[this.rng.int(out.length)] as Task);
    return out;
  }

  async collect(iteration: number): Promise<{ batch: TokenBatch; stats: BatchStats }> {
    const trajs = await this.rollout.collect({
      tasks: this.pickTasks(),
      samples: this.config.groupSize,
      config: this.config.env,
      seed: this.config.seed + iteration,
    });
    for (const tr of trajs) this.curriculum.record(tr.level, tr.solved);
    const returns = trajs.map((t) => t.return);
    // A group is one task's `groupSize` episodes (the same task may be drawn twice).
    const groups = trajs.map((t, i) => `${t.group}#${Math.floor(i / this.config.groupSize)}`);
    const { estimator, gamma, lambda } = this.config;
    const advantages =
      estimator === 'gae'
        ? gaeAdvantages(trajs, gamma, lambda)
        : estimator === 'grpo'
          ? grpoAdvantages(returns, groups)
          : rlooAdvantages(returns, groups);
    const n = Math.max(1, trajs.length);
    return {
      batch: trajectoryBatch(trajs, advantages, this.config.contextLength),
      stats: {
        episodes: trajs.length,
        meanReturn: returns.reduce((a, b) => a + b, 0) / n,
        success: trajs.filter((t) => t.solved).length / n,
      },
    };
  }

  async train(batch: TokenBatch, version: number): Promise<{ loss: number }> {
    for (let i = 0; i < this.config.updatesPerBatch; i++) {
      this.lastMetrics = await this.trainer.trainBatch(batch, version);
    }
    return { loss: this.lastMetrics?.loss ?? NaN };
  }
}
