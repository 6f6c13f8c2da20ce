import { Curriculum } from '../env/curriculum';
import { HeldOutIndex } from '../env/decontaminate';
import { kindOf, LEVELS, type Task } from '../env/suite';
import { withHint } from '../env/tooluse';
import { RUN } from '../env/vocab';
import { openingOf } from '../rl/revise-imitation';

import { grpoAdvantages, rlooAdvantages } from '../rl/advantages';
import { turnAdvantages } from '../rl/turn-credit';
import { mixedReturn, mixes, ownedTokens } from '../rl/reward-mix';
import type { TokenBatch } from '../rl/batch';
import { Rng } from '../random';
import { HindsightPool, isRelabelledTask, validateHindsight } from '../rl/hindsight';
import { defaultRunConfig, type RunConfig } from '../config/run-config';
import { gaeAdvantages, trajectoryBatch } from '../rl/trajectory';
import type { JobSource, PipelineConfig } from './controller';
import { ExpectedRewards, learningValue, type JobClass } from './scheduler';
import type { RewardConfig } from '../env/config';
import type { PlayedGroup, RunProgress } from './types';

/** The weight of each earlier start near the goal in their solved rate (about the last 50). */
const OPENING_KEEP = 0.98;

/**
 * The optimistic expected return of a task never played: what a first-turn solve earns before
 * its turn cost (all hidden tests passed, outputs exact, the program ran).
 */
export function optimisticReturn(r: RewardConfig): number {
  return r.pass + r.closeness + r.ranOk;
}

/** The pipeline a run of this config drives: its batches, hindsight, env and scheduling. */
export function pipelineConfigOf(c: RunConfig): PipelineConfig {
  return {
    eta: c.pipeline.eta,
    playLag: c.pipeline.playLag,
    batchGroups: c.learner.tasksPerBatch,
    groupSize: c.learner.groupSize,
    slotsPerWorker: c.pipeline.slotsPerWorker,
    preemptAfterMs: c.pipeline.preemptAfterMs,
    schedule: c.pipeline.schedule,
    queueAhead: c.pipeline.queueAhead,
    preemptMargin: c.pipeline.preemptMargin,
    budget: { sandboxMs: c.pipeline.budgetSandboxMs, tokens: c.pipeline.budgetTokens },
    replay: c.replay,
    env: c.env,
    relabelMaxAbs: c.hindsight.samplesPerBatch > 0 ? c.hindsight.maxAbsOutput : 0,
    relabelMutations: c.hindsight.mutations,
    seed: c.seed,
    maxJobFailures: 2,
  };
}

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
  /** Per task: the running mean of its recent returns (`pipeline.schedule: 'expected-reward'`). */
  readonly rewards: ExpectedRewards;
  /** Jobs that posed a relabelled task from the pool (`hindsight.taskFraction`). */
  posed = 0;
  private readonly rng: Rng;

  constructor(
    private readonly trainTasks: readonly Task[],
    readonly config: RunConfig = defaultRunConfig(),
    /** Tasks the run must never train on (held-out, generalisation): relabelled programs that compute one are dropped. */
    heldOut: readonly Task[] = [],
  ) {
    if (trainTasks.length === 0) throw new Error('no training tasks');
    if (!Number.isInteger(config.task.candidates) || config.task.candidates < 1)
      throw new Error(`candidates must be a positive integer, got ${config.task.candidates}`);
    validateHindsight(config.hindsight);
    if (!(
      config.task.valueWindow === 0 ||
      (config.task.valueWindow >= 1 && Number.isFinite(config.task.valueWindow))
    ))
      throw new Error(`valueWindow must be 0 or a number ≥ 1, got ${config.task.valueWindow}`);
    if (!(config.policy.temperature > 0 && Number.isFinite(config.policy.temperature)))
      throw new Error(`temperature must be a positive number, got ${config.policy.temperature}`);
    this.curriculum = new Curriculum(config.task.curriculum, trainTasks);
    this.hindsight = new HindsightPool(
      config.hindsight.samplesPerBatch > 0 ? config.hindsight.capacity : 0,
      heldOut.length > 0 ? new HeldOutIndex(heldOut) : null,
    );
    this.rng = new Rng(config.seed);
    this.rewards = new ExpectedRewards(optimisticReturn(config.env.reward));
  }

  /** Expected learning value of a task from its record. */
  value(taskId: string): number {
    const [n, s] = this.records.get(taskId) ?? [0, 0];
    return learningValue(s, n);
  }

  /**
   * How a drawn task ranks among the candidates under `pipeline.schedule`: its learning value,
   * its expected return, or alike for all (`fifo`: the first drawn is played).
   */
  private score(taskId: string): number {
    const kind = this.config.pipeline.schedule;
    return kind === 'expected-reward' ? this.rewards.of(taskId) : kind === 'fifo' ? 0 : this.value(taskId);
  }

  /** The job of `task`: its class, learning value and expected return. */
  private jobOf(
    task: Task,
    cls: JobClass,
  ): { task: Task; cls: JobClass; value: number; expectedReward: number } {
    return { task, cls, value: this.value(task.id), expectedReward: this.rewards.of(task.id) };
  }

  /** Episodes begun near the goal and those solved, each earlier one weighing `OPENING_KEEP` as much. */
  private openings: [number, number] = [0, 0];

  nextTask(): { task: Task; cls: JobClass; value: number; expectedReward: number } {
    const posed = this.poseRelabelled();
    if (posed) {
      this.posed += 1;
      return this.jobOf(posed, 'normal');
    }
    const level = this.curriculum.levelIndexNow;
    const easier = this.trainTasks.filter((t) => LEVELS.indexOf(t.level) < level);
    const review =
      this.curriculum.config.enabled &&
      easier.length > 0 &&
      this.rng.next() < this.config.task.reviewFraction;
    const pool = review ? easier : this.curriculum.tasksFor(this.trainTasks);
    let best: Task | undefined;
    for (let k = 0; k < this.config.task.candidates; k++) {
      const t = this.rng.pick(pool.length ? pool : this.trainTasks);
      if (!best || this.score(t.id) > this.score(best.id)) best = t;
    }
    const task = best as Task;
    const job = this.jobOf(task, review ? 'low' : 'normal');
    return { ...job, task: this.helped(task) };
  }

  /**
   * A tool-use task shown a second example (the hint share faded by the task's success so far),
   * or begun near the goal: a wrong first program already run (the share faded by how often such
   * starts were solved).
   */
  private helped(task: Task): Task {
    if (kindOf(task) !== 'tooluse') return task;
    const { hintFraction, openingFraction } = this.config.task;
    const [n, s] = this.records.get(task.id) ?? [0, 0];
    if (hintFraction > 0 && this.rng.next() < hintFraction * (1 - (n > 0 ? s / n : 0))) return withHint(task);
    const [on, os] = this.openings;
    if (openingFraction > 0 && this.rng.next() < openingFraction * (1 - (on > 0 ? os / on : 0))) {
      const opening = openingOf(task, this.rng);
      if (opening) return { ...task, opening };
    }
    return task;
  }

  /**
   * With probability `hindsight.taskFraction`, a relabelled task from the pool (the better of
   * `candidates` draws by learning value) to play as a job; else null.
   */
  private poseRelabelled(): Task | null {
    const { samplesPerBatch, taskFraction } = this.config.hindsight;
    if (samplesPerBatch === 0 || taskFraction === 0 || this.rng.next() >= taskFraction) return null;
    let best: Task | null = null;
    for (let k = 0; k < this.config.task.candidates; k++) {
      const t = this.hindsight.pickTask(this.rng);
      if (t && (!best || this.score(t.id) > this.score(best.id))) best = t;
    }
    return best;
  }

  record(group: PlayedGroup): void {
    for (const tr of group.trajectories) {
      // The curriculum follows the training tasks only, not relabelled tasks posed as jobs.
      if (!isRelabelledTask(tr.taskId)) this.curriculum.record(tr.taskId, tr.level, tr.solved);
      const [n, s] = this.records.get(tr.taskId) ?? [0, 0];
      const keep = this.config.task.valueWindow > 0 ? 1 - 1 / this.config.task.valueWindow : 1;
      this.records.set(tr.taskId, [n * keep + 1, s * keep + (tr.solved ? 1 : 0)]);
      this.rewards.record(tr.taskId, tr.return);
    }
    for (const r of group.relabelled) this.hindsight.add(r);
    // Episodes begun near the goal (their first <run> is not the policy's): how often they end solved.
    for (const tr of group.trajectories) {
      const run = tr.tokens.indexOf(RUN);
      if (run < 0 || tr.owned[run] === 1) continue;
      const [n, s] = this.openings;
      this.openings = [n * OPENING_KEEP + 1, s * OPENING_KEEP + (tr.solved ? 1 : 0)];
    }
  }

  batch(
    played: readonly PlayedGroup[],
    weights: readonly number[],
  ): { batch: TokenBatch; priorities: number[] } {
    const groups = this.config.learner.dropVoid ? withoutVoid(played) : played;
    const trajs = groups.flatMap((g) => g.trajectories);
    const groupOf = groups.flatMap((g) => g.trajectories.map(() => String(g.jobId)));
    const weightOf = groups.flatMap((g, i) => g.trajectories.map(() => weights[i] ?? 1));
    const { estimator, gamma, lambda, turnBonus, contextLength } = this.config.learner;
    const returns = mixes(this.config.learner)
      ? this.mixedReturns(groups, contextLength)
      : trajs.map((t) => t.return);
    const raw =
      estimator === 'gae'
        ? gaeAdvantages(trajs, gamma, lambda)
        : estimator === 'turn'
          ? turnAdvantages(trajs, groupOf, turnBonus)
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
    const length = Math.min(this.config.learner.contextLength, Math.ceil(longest / 8) * 8);
    return {
      batch: trajectoryBatch(rows, [...advantages, ...relabelled.map(() => advantage)], length, [
        ...weightOf,
        ...relabelled.map(() => 1),
      ]),
      priorities,
    };
  }

  /** Each episode's return as the reward mix weighs it (`rl/reward-mix.ts`), in the groups' order. */
  private mixedReturns(groups: readonly PlayedGroup[], contextLength: number): number[] {
    const budget = this.config.pipeline.budgetSandboxMs;
    return groups.flatMap((g) =>
      g.trajectories.map((t, i) =>
        mixedReturn(
          { quality: t.return, tokens: ownedTokens(t), sandboxMs: g.episodeSandboxMs?.[i] ?? 0 },
          this.config.learner,
          contextLength,
          budget,
        ),
      ),
    );
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

/** The groups without their void episodes (`Trajectory.voidTurn`); all of them when that would leave none. */
export function withoutVoid(groups: readonly PlayedGroup[]): readonly PlayedGroup[] {
  const kept = groups.map((g) => {
    const keep = g.trajectories.map((t) => !t.voidTurn);
    const ms = g.episodeSandboxMs?.filter((_, i) => keep[i]);
    return {
      ...g,
      trajectories: g.trajectories.filter((_, i) => keep[i]),
      ...(ms ? { episodeSandboxMs: ms } : {}),
    };
  });
  return kept.some((g) => g.trajectories.length > 0) ? kept : groups;
}
