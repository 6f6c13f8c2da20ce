import type { Level, TaskSuite } from '../env/suite';
import { DEFAULT_CODE_RUN, type CodeRunConfig } from './code-workload';
import type { TrainerConfig } from '../policy/config';
import type { LoraConfig } from '../policy/lora';
import { DEFAULT_REPLAY, type ReplayConfig } from '../rl/replay';
import { validateRunTasks } from './run-tasks';
import type { PipelineConfig } from './controller';

/** Everything a training run of the code-writing policy is started with (stored with the run). */
export interface RunSettings {
  /** Rollout workers, 1–8. */
  workers: number;
  /** Max staleness η: 0 synchronous, `Infinity` unbounded. */
  eta: number;
  /** Policy loss: decoupled PPO (AReaL) or standard PPO clip against the behaviour policy. */
  loss: Extract<TrainerConfig['loss'], 'decoupled' | 'ppo'>;
  /** Groups each rollout worker plays at once. */
  slotsPerWorker: number;
  /**
   * A rollout worker adopts a new version at the next turn boundary of its episodes, or after
   * this many decode steps if that comes first (0: at turn boundaries only). The default, 1,
   * adopts at the next token, as AReaL interrupts generation: adoption then takes about one decode
   * step.
   */
  interruptEveryTokens: number;
  /** A waiting job of a higher class preempts after this long, ms. */
  preemptAfterMs: number;
  replay: ReplayConfig;
  code: CodeRunConfig;
  /** Train on this level only (the learn bench trains on easy); every level under the curriculum otherwise. */
  level: Level | null;
  /** Retention: newest versions kept, and every n-th version kept as a milestone. */
  keepVersions: number;
  milestoneEvery: number;
  /** Consumed trajectories kept in the store (the replay ring). */
  keepConsumed: number;
  /** Seed of the initial weights, of task draws and of sampling. */
  seed: number;
  /**
   * LoRA (issue 5 §4): train rank-r adapters on a frozen base, so that every version after
   * version 0 (the base) holds only the adapters; null trains every parameter.
   */
  lora: LoraConfig | null;
  /**
   * Start from a stored version of another run (its policy as it runs: a LoRA version merged
   * into its base) instead of fresh weights from `seed`; Adam starts fresh. With `lora`, the
   * stored policy is the frozen base the adapters adapt (fine-tuning a trained policy).
   */
  startFrom: { runId: string; version: number } | null;
  /**
   * Train on these tasks instead of the built-in suite's training tasks: a copy of a saved suite
   * (e.g. "my tasks", written in the page), taken when it is chosen and stored with the run, so
   * that editing the suite later does not change what a run trained on. null: the built-in tasks.
   * Held-out tasks stay the built-in suite's (`run-tasks.ts`).
   */
  tasks: TaskSuite | null;
}

/** The largest LoRA rank the page offers (d_model is 64: a rank past 16 saves little). */
export const MAX_LORA_RANK = 16;

/** The default number of rollout workers: min(4, cores − 1), at least 1. */
export function defaultWorkers(cores: number | undefined): number {
  return Math.max(1, Math.min(4, (cores ?? 2) - 1));
}

export function defaultSettings(cores?: number): RunSettings {
  return {
    workers: defaultWorkers(cores),
    eta: 4,
    loss: 'decoupled',
    slotsPerWorker: 2,
    interruptEveryTokens: 1,
    preemptAfterMs: 500,
    replay: DEFAULT_REPLAY,
    code: DEFAULT_CODE_RUN,
    level: null,
    keepVersions: 5,
    milestoneEvery: 10,
    keepConsumed: 2048,
    seed: 1,
    lora: null,
    startFrom: null,
    tasks: null,
  };
}

/** Throws with a readable message when `s` cannot start a run. */
export function validateSettings(s: RunSettings): void {
  if (!Number.isInteger(s.workers) || s.workers < 1 || s.workers > 8)
    throw new Error(`rollout workers must be an integer from 1 to 8, got ${s.workers}`);
  if (!(s.eta >= 0)) throw new Error(`η must be 0 or more (or unbounded), got ${s.eta}`);
  if (Number.isFinite(s.eta) && !Number.isInteger(s.eta))
    throw new Error(`η must be an integer, got ${s.eta}`);
  const oneOf = (what: string, v: unknown, allowed: readonly unknown[]) => {
    if (!allowed.includes(v))
      throw new Error(
        `${what} must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}, got ${JSON.stringify(v)}`,
      );
  };
  oneOf('the policy loss', s.loss, ['decoupled', 'ppo']);
  oneOf('the advantage estimator', s.code.estimator, ['rloo', 'grpo', 'gae']);
  oneOf('the replay mode', s.replay.mode, ['fifo', 'prioritized']);
  oneOf('the level', s.level, [null, 'easy', 'medium', 'hard']);
  if (!Number.isInteger(s.seed)) throw new Error(`the seed must be an integer, got ${s.seed}`);
  for (const k of ['interruptEveryTokens', 'preemptAfterMs', 'keepConsumed'] as const) {
    if (!Number.isInteger(s[k]) || s[k] < 0) throw new Error(`${k} must be an integer ≥ 0, got ${s[k]}`);
  }
  for (const k of ['tasksPerBatch', 'groupSize'] as const) {
    if (!Number.isInteger(s.code[k]) || s.code[k] < 1)
      throw new Error(`${k} must be a positive integer, got ${s.code[k]}`);
  }
  for (const k of ['slotsPerWorker', 'keepVersions', 'milestoneEvery'] as const) {
    if (!Number.isInteger(s[k]) || s[k] < 1) throw new Error(`${k} must be a positive integer, got ${s[k]}`);
  }
  if (s.lora) {
    const { rank, alpha } = s.lora;
    if (!Number.isInteger(rank) || rank < 1 || rank > MAX_LORA_RANK)
      throw new Error(`LoRA rank must be an integer from 1 to ${MAX_LORA_RANK}, got ${rank}`);
    if (!(alpha > 0 && Number.isFinite(alpha)))
      throw new Error(`LoRA alpha must be a positive number, got ${alpha}`);
  }
  if (!(s.code.lrHalfLife >= 0) || !Number.isFinite(s.code.lrHalfLife))
    throw new Error(
      `the learning rate's half-life must be 0 (constant) or a number of versions, got ${s.code.lrHalfLife}`,
    );
  if (s.startFrom) {
    const { runId, version } = s.startFrom;
    if (typeof runId !== 'string' || runId === '') throw new Error('start from: no run named');
    if (!Number.isInteger(version) || version < 0)
      throw new Error(`start from: the version must be a non-negative integer, got ${version}`);
  }
  validateRunTasks(s.tasks, s.level);
  if (s.slotsPerWorker * s.code.groupSize > 32)
    throw new Error(
      `a worker decodes at most 32 episodes: ${s.slotsPerWorker} slots × ${s.code.groupSize} is more`,
    );
}

/** What the trainer needs of a run's settings to build or restore its policy. */
export interface PolicySettings {
  seed: number;
  loss: RunSettings['loss'];
  learningRate: number;
  lora: LoraConfig | null;
}

/**
 * What the trainer builds its policy with for a run of these settings (a resumed run restores
 * its own newest version with them; a new one adds `startFrom`).
 */

export function policyReset(s: RunSettings): PolicySettings {
  return { seed: s.seed, loss: s.loss, learningRate: s.code.learningRate, lora: s.lora };
}

/** The pipeline a run of these settings drives: its code config's batches, hindsight and env. */
export function pipelineConfigOf(s: RunSettings): PipelineConfig {
  const code = s.code;
  return {
    eta: s.eta,
    batchGroups: code.tasksPerBatch,
    groupSize: code.groupSize,
    slotsPerWorker: s.slotsPerWorker,
    preemptAfterMs: s.preemptAfterMs,
    replay: s.replay,
    env: code.env,
    relabelMaxAbs: code.hindsight.samplesPerBatch > 0 ? code.hindsight.maxAbsOutput : 0,
    seed: s.seed,
    maxJobFailures: 2,
  };
}

/** Settings as stored JSON (η = Infinity becomes null) and back. */
export function settingsToJson(s: RunSettings): Record<string, unknown> {
  return { ...s, eta: Number.isFinite(s.eta) ? s.eta : null };
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `stored` over `base`, object by object at every depth: what `stored` lacks keeps its default. */
function withDefaults(base: unknown, stored: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(stored)) return stored === undefined ? base : stored;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(stored)) out[k] = withDefaults(base[k], v);
  return out;
}

/**
 * What a run stored before these fields existed trained with, where today's default would change
 * how it goes on: a resumed constant-rate run at version 1 500 would otherwise drop to a fifth of
 * its learning rate at once.
 */
const BEFORE_THE_FIELD = { code: { lrHalfLife: 0, valueWindow: 0 } };

/**
 * Settings from stored JSON. Fields added since a run was stored take their defaults, at every
 * depth (the code config, its hindsight, environment and curriculum configs), except those of
 * `BEFORE_THE_FIELD`, which keep the behaviour the run was trained with.
 */
export function settingsFromJson(json: Record<string, unknown>): RunSettings {
  const s = withDefaults(withDefaults(defaultSettings(), BEFORE_THE_FIELD), json) as RunSettings;
  return { ...s, eta: json.eta === null ? Infinity : Number(s.eta) };
}
