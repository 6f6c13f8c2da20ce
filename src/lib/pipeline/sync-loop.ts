import { DEFAULT_ENV_CONFIG, type EnvConfig } from '../env/config';
import {
  Curriculum,
  DEFAULT_CURRICULUM,
  type CurriculumConfig,
  type CurriculumView,
} from '../env/curriculum';
import type { Level, Task } from '../env/suite';
import type { StepMetrics } from '../policy/trainer';
import type { Checkpoint } from '../policy/weights';
import { grpoAdvantages, rlooAdvantages } from '../rl/advantages';
import type { TokenBatch } from '../rl/batch';
import { Rng } from '../rl/random';
import { trajectoryBatch, type Trajectory } from '../rl/trajectory';

/** What the loop needs from a rollout worker (its bridge's API). */
export interface RolloutPort {
  collect(req: { tasks: Task[]; samples: number; config?: EnvConfig; seed: number }): Promise<Trajectory[]>;
  loadPolicy(checkpoint: Checkpoint, version: number): Promise<void>;
}

/** What the loop needs from the trainer worker (its bridge's API). */
export interface TrainerPort {
  trainBatch(batch: TokenBatch, version: number): Promise<StepMetrics>;
  exportPolicy(): Promise<Checkpoint>;
}

/** Settings of a training run of the code-writing policy. */
export interface LoopConfig {
  /** Distinct tasks per batch. */
  tasksPerBatch: number;
  /** Episodes per task in a batch (the group of GRPO and RLOO). */
  groupSize: number;
  /** Outcome-level advantage estimator. */
  estimator: 'rloo' | 'grpo';
  /** Batch length in tokens: the policy's context. */
  contextLength: number;
  env: EnvConfig;
  curriculum: CurriculumConfig;
  /** Seed of task sampling and of the rollout's sampling stream. */
  seed: number;
}

export const DEFAULT_LOOP_CONFIG: LoopConfig = {
  tasksPerBatch: 4,
  groupSize: 4,
  estimator: 'rloo',
  contextLength: 64,
  env: DEFAULT_ENV_CONFIG,
  curriculum: DEFAULT_CURRICULUM,
  seed: 1,
};

/** What one iteration did, for the page's charts. */
export interface IterationReport {
  iteration: number;
  /** Version the batch was collected with, and the version published after the update. */
  collectedWith: number;
  published: number;
  episodes: number;
  meanReturn: number;
  success: number;
  level: Level;
  curriculum: CurriculumView;
  metrics: StepMetrics;
  rolloutMs: number;
  trainMs: number;
}

/**
 * The synchronous training loop (η = 0): collect a batch with the current version, update,
 * publish, repeat. The async pipeline of issue 6 generalises exactly this loop.
 */
export class SyncLoop {
  readonly curriculum: Curriculum;
  iteration = 0;
  version = -1;
  private readonly rng: Rng;

  constructor(
    private readonly rollout: RolloutPort,
    private readonly trainer: TrainerPort,
    private readonly trainTasks: readonly Task[],
    readonly config: LoopConfig = DEFAULT_LOOP_CONFIG,
  ) {
    if (trainTasks.length === 0) throw new Error('no training tasks');
    this.curriculum = new Curriculum(config.curriculum);
    this.rng = new Rng(config.seed);
  }

  /** Publishes the trainer's starting weights as version 0 so both workers hold the same policy. */
  async start(): Promise<void> {
    this.version = 0;
    await this.rollout.loadPolicy(await this.trainer.exportPolicy(), this.version);
  }

  /** Tasks for the next batch: distinct when the level has enough, drawn by the loop's seed. */
  pickTasks(): Task[] {
    const pool = [...this.curriculum.tasksFor(this.trainTasks)];
    const out: Task[] = [];
    while (out.length < this.config.tasksPerBatch && pool.length > 0) {
      out.push(pool.splice(this.rng.int(pool.length), 1)[0] as Task);
    }
    while (out.length < this.config.tasksPerBatch) out.push(out[this.rng.int(out.length)] as Task);
    return out;
  }

  async iterate(): Promise<IterationReport> {
    if (this.version < 0) await this.start();
    const level = this.curriculum.level;
    const t0 = performance.now();
    const trajs = await this.rollout.collect({
      tasks: this.pickTasks(),
      samples: this.config.groupSize,
      config: this.config.env,
      seed: this.config.seed + this.iteration,
    });
    const t1 = performance.now();
    for (const tr of trajs) this.curriculum.record(tr.level, tr.solved);
    const returns = trajs.map((t) => t.return);
    const groups = trajs.map((t, i) => `${t.group}#${Math.floor(i / this.config.groupSize)}`);
    const advantages =
      this.config.estimator === 'grpo' ? grpoAdvantages(returns, groups) : rlooAdvantages(returns, groups);
    const collectedWith = this.version;
    const metrics = await this.trainer.trainBatch(
      trajectoryBatch(trajs, advantages, this.config.contextLength),
      collectedWith,
    );
    this.version += 1;
    await this.rollout.loadPolicy(await this.trainer.exportPolicy(), this.version);
    this.iteration += 1;
    return {
      iteration: this.iteration,
      collectedWith,
      published: this.version,
      episodes: trajs.length,
      meanReturn: returns.reduce((a, b) => a + b, 0) / Math.max(1, returns.length),
      success: trajs.filter((t) => t.solved).length / Math.max(1, trajs.length),
      level,
      curriculum: this.curriculum.view(),
      metrics,
      rolloutMs: t1 - t0,
      trainMs: performance.now() - t1,
    };
  }
}
