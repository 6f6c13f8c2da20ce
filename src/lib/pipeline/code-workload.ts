import { DEFAULT_ENV_CONFIG, type EnvConfig } from '../env/config';
import { Curriculum, DEFAULT_CURRICULUM, type CurriculumConfig } from '../env/curriculum';
import { HeldOutIndex } from '../env/decontaminate';
import { LEVELS, type Task } from '../env/suite';
import { grpoAdvantages, rlooAdvantages } from '../rl/advantages';
import type { TokenBatch } from '../rl/batch';
import { Rng } from '../random';
import {
  DEFAULT_HINDSIGHT,
  HindsightPool,
  isRelabelledTask,
  validateHindsight,
  type HindsightConfig,
} from '../rl/hindsight';
import { gaeAdvantages, trajectoryBatch } from '../rl/trajectory';
import type { JobSource } from './controller';
import { learningValue, type JobClass } from './scheduler';
import type { PlayedGroup, RunProgress } from './types';

/** Settings of a training run of the code-writing policy. */
export interface CodeRunConfig {
  /** Distinct tasks (groups) per training batch: B of the staleness rule. */
  tasksPerBatch: number;
  /** Episodes per task in a batch (the group of GRPO and RLOO). */
  groupSize: number;
  /** Advantage estimator: group-relative outcome (RLOO, GRPO) or per-token GAE with the value head. */
  estimator: 'rloo' | 'grpo' | 'gae';
  /** GAE discount γ and λ (estimator `gae`). */
  gamma: number;
  lambda: number;
  /**
   * Optimiser steps per batch (PPO epochs). π_prox is the policy before the first step, held
   * fixed: after the first step π_θ moves away from it and the clip bounds each token's ratio.
   * With one step it is that step's own forward pass (no separate pass); with more it is
   * computed once, apart, before them. Default 1 (docs/experiments.md: the learn bench).
   */
  updatesPerBatch: number;
  /** Adam learning rate of the run (set on the trainer, with a fresh optimiser state, at start). */
  learningRate: number;
  /**
   * The gradient's global norm is clipped to this before each step (0.5, CleanRL's). Far above the
   * norms a run reaches (1 000), it is off: standard PPO's unbounded w·A then reaches the step.
   */
  maxGradNorm: number;
  /**
   * Versions over which the learning rate halves (0: constant), down to a tenth of
   * `learningRate`; Adam keeps its moments as the rate changes (docs/experiments.md: the schedule).
   */
  lrHalfLife: number;
  /** Batch length in tokens: the policy's context. */
  contextLength: number;
  env: EnvConfig;
  curriculum: CurriculumConfig;
  /**
   * Tasks drawn for each new job; the one with the highest expected learning value (success
   * rate nearest 0.5) is played (DESIGN §6). 1: uniform over the level.
   */
  candidates: number;
  /**
   * Attempts a task's success rate looks back over (DESIGN §6 asks for the *recent* success
   * rate): each earlier attempt weighs 1 − 1/valueWindow as much as the one after it. 0 counts
   * every attempt of the run alike (the default).
   */
  valueWindow: number;
  /** Once promoted, the fraction of jobs that review an easier level (priority class `low`). */
  reviewFraction: number;
  /**
   * Sampling temperature of the rollouts (> 1 explores more). The decoupled loss's w = π_prox/π_behav
   * corrects for sampling from the tempered distribution rather than the policy's own.
   */
  temperature: number;
  /** Hindsight relabelling: solved episodes of tasks made from the policy's own programs, added to each batch. */
  hindsight: HindsightConfig;
  /** Seed of task sampling and of the rollout's sampling stream. */
  seed: number;
}

/** The learning rate of the step that makes version `version + 1`. */
export function scheduledRate(
  cfg: Pick<CodeRunConfig, 'learningRate' | 'lrHalfLife'>,
  version: number,
): number {
  if (!(cfg.lrHalfLife > 0)) return cfg.learningRate;
  return cfg.learningRate * Math.max(0.1, 0.5 ** (version / cfg.lrHalfLife));
}

export const DEFAULT_CODE_RUN: CodeRunConfig = {
  tasksPerBatch: 4,
  groupSize: 4,
  estimator: 'rloo',
  updatesPerBatch: 1,
  learningRate: 3e-3,
  maxGradNorm: 0.5,
  lrHalfLife: 600,
  gamma: 1,
  lambda: 0.95,
  contextLength: 64,
  env: DEFAULT_ENV_CONFIG,
  curriculum: DEFAULT_CURRICULUM,
  candidates: 2,
  valueWindow: 0,
  reviewFraction: 0.1,
  temperature: 1,
  hindsight: DEFAULT_HINDSIGHT,
  seed: 1,
};

/**
 * The code-writing environment as the pipeline's work: tasks from the curriculum's level ordered
 * by learning value, a group of episodes per task, group-relative advantages on the policy's
 * own tokens.
 */
export class CodeJobSource implements JobSource {
  readonly curriculum: Curriculum;
  /** Per task: [attempts, successes] over finished episodes, weighted by recency (`valueWindow`). */
  readonly records = new Map<string, [number, number]>();
  /** Relabelled episodes (hindsight) the batches draw from; empty when hindsight is off. */
  readonly hindsight: HindsightPool;
  /** Jobs that posed a relabelled task from the pool (`hindsight.taskFraction`). */
  posed = 0;
  private readonly rng: Rng;

  constructor(
    private readonly trainTasks: readonly Task[],
    readonly config: CodeRunConfig = DEFAULT_CODE_RUN,
    /** Tasks the run must never train on (held-out, generalisation): relabelled programs that compute one are dropped. */
    heldOut: readonly Task[] = [],
  ) {
    if (trainTasks.length === 0) throw new Error('no training tasks');
    if (!Number.isInteger(config.candidates) || config.candidates < 1)
      throw new Error(`candidates must be a positive integer, got ${config.candidates}`);
    validateHindsight(config.hindsight);
    if (!(config.valueWindow === 0 || (config.valueWindow >= 1 && Number.isFinite(config.valueWindow))))
      throw new Error(`valueWindow must be 0 or a number ≥ 1, got ${config.valueWindow}`);
    if (!(config.temperature > 0 && Number.isFinite(config.temperature)))
      throw new Error(`temperature must be a positive number, got ${config.temperature}`);
    this.curriculum = new Curriculum(config.curriculum, trainTasks);
    this.hindsight = new HindsightPool(
      config.hindsight.samplesPerBatch > 0 ? config.hindsight.capacity : 0,
      heldOut.length > 0 ? new HeldOutIndex(heldOut) : null,
    );
    this.rng = new Rng(config.seed);
  }

  /** Expected learning value of a task from its record. */
  value(taskId: string): number {
    const [n, s] = this.records.get(taskId) ?? [0, 0];
    return learningValue(s, n);
  }

  nextTask(): { task: Task; cls: JobClass; value: number } {
    const posed = this.poseRelabelled();
    if (posed) {
      this.posed += 1;
      return { task: posed, cls: 'normal', value: this.value(posed.id) };
    }
    const level = this.curriculum.levelIndexNow;
    const easier = this.trainTasks.filter((t) => LEVELS.indexOf(t.level) < level);
    const review =
      this.curriculum.config.enabled && easier.length > 0 && this.rng.next() < this.config.reviewFraction;
    const pool = review ? easier : this.curriculum.tasksFor(this.trainTasks);
    let best: Task | undefined;
    for (let k = 0; k < this.config.candidates; k++) {
      const t = this.rng.pick(pool.length ? pool : this.trainTasks);
      if (!best || this.value(t.id) > this.value(best.id)) best = t;
    }
    const task = best as Task;
    return { task, cls: review ? 'low' : 'normal', value: this.value(task.id) };
  }

  /**
   * With probability `hindsight.taskFraction`, a relabelled task from the pool (the better of
   * `candidates` draws by learning value) to play as a job; else null.
   */
  private poseRelabelled(): Task | null {
    const { samplesPerBatch, taskFraction } = this.config.hindsight;
    if (samplesPerBatch === 0 || taskFraction === 0 || this.rng.next() >= taskFraction) return null;
    let best: Task | null = null;
    for (let k = 0; k < this.config.candidates; k++) {
      const t = this.hindsight.pickTask(this.rng);
      if (t && (!best || this.value(t.id) > this.value(best.id))) best = t;
    }
    return best;
  }

  record(group: PlayedGroup): void {
    for (const tr of group.trajectories) {
      // The curriculum follows the training tasks only, not relabelled tasks posed as jobs.
      if (!isRelabelledTask(tr.taskId)) this.curriculum.record(tr.taskId, tr.level, tr.solved);
      const [n, s] = this.records.get(tr.taskId) ?? [0, 0];
      const keep = this.config.valueWindow > 0 ? 1 - 1 / this.config.valueWindow : 1;
      this.records.set(tr.taskId, [n * keep + 1, s * keep + (tr.solved ? 1 : 0)]);
    }
    for (const r of group.relabelled) this.hindsight.add(r);
  }

  batch(
    groups: readonly PlayedGroup[],
    weights: readonly number[],
  ): { batch: TokenBatch; priorities: number[] } {
    const trajs = groups.flatMap((g) => g.trajectories);
    const groupOf = groups.flatMap((g) => g.trajectories.map(() => String(g.jobId)));
    const weightOf = groups.flatMap((g, i) => g.trajectories.map(() => weights[i] ?? 1));
    const returns = trajs.map((t) => t.return);
    const { estimator, gamma, lambda } = this.config;
    const raw =
      estimator === 'gae'
        ? gaeAdvantages(trajs, gamma, lambda)
        : estimator === 'grpo'
          ? grpoAdvantages(returns, groupOf)
          : rlooAdvantages(returns, groupOf);
    // Importance weights of prioritized replay scale each sample's advantage (1 in FIFO mode),
    // so its policy loss, and its value loss through the batch's `weights`.
    const advantages = raw.map((a, i) => {
      const w = weightOf[i] ?? 1;
      return typeof a === 'number' ? a * w : { ...a, advantages: a.advantages.map((x) => x * w) };
    });
    const size = (a: (typeof raw)[number]) =>
      typeof a === 'number' ? Math.abs(a) : Math.max(0, ...a.advantages.map(Math.abs));
    let k = 0;
    const priorities = groups.map((g) => {
      const n = g.trajectories.length;
      const mean = raw.slice(k, k + n).reduce<number>((s, a) => s + size(a), 0) / Math.max(1, n);
      k += n;
      return mean;
    });
    // Relabelled episodes follow the groups' rows: they solved their (relabelled) task.
    const { samplesPerBatch, uniformFraction, advantage } = this.config.hindsight;
    const relabelled = this.hindsight.sample(samplesPerBatch, uniformFraction, this.rng);
    const rows = [...trajs, ...relabelled];
    const longest = Math.max(...rows.map((t) => t.tokens.length));
    // Rows padded to the longest, rounded up to 8 (few distinct shapes for WebGPU's shader cache).
    const length = Math.min(this.config.contextLength, Math.ceil(longest / 8) * 8);
    return {
      batch: trajectoryBatch(rows, [...advantages, ...relabelled.map(() => advantage)], length, [
        ...weightOf,
        ...relabelled.map(() => 1),
      ]),
      priorities,
    };
  }

  /**
   * What a resumed run needs of the source (saved with every version): the curriculum and the
   * training tasks' records. Posed relabelled tasks' records are left out (the pool itself is
   * saved apart, every `POOL_EVERY` versions and at Stop; their values are relearned).
   */
  progress(): Pick<RunProgress, 'curriculum' | 'taskRecords'> {
    const records = [...this.records].filter(([id]) => !isRelabelledTask(id));
    return { curriculum: this.curriculum.snapshot(), taskRecords: Object.fromEntries(records) };
  }

  restore(p: RunProgress | undefined): void {
    if (p?.curriculum) this.curriculum.restore(p.curriculum);
    for (const [id, r] of Object.entries(p?.taskRecords ?? {})) this.records.set(id, r);
  }
}
