import { shown, shownNumber } from '../errors';
import { MAX_REWARD_WEIGHT, validateEnvConfig } from '../env/config';
import { TASK_KINDS, type Level, type TaskKind, type TaskSuite } from '../env/suite';
import { envConfigOf } from '../env/task-kinds';
import { BIG } from '../env/tokenizer';
import { DEFAULT_CODE_RUN, type CodeRunConfig } from './code-workload';
import { DEFAULT_MODEL_ARGS, type TrainerConfig } from '../policy/config';
import type { LoraConfig } from '../policy/lora';
import { isBuiltInBase, type BuiltInBase } from '../policy/bases';
import { DEFAULT_REPLAY, type ReplayConfig } from '../rl/replay';
import { validateRunTasks } from './run-tasks';
import type { PipelineConfig } from './controller';

/** A stored version of a run, or a policy that ships with the page (`BUILT_IN_BASES`). */
export type StartFrom = { runId: string; version: number } | { base: BuiltInBase };

/** Everything a training run of the code-writing policy is started with (stored with the run). */
export interface RunSettings {
  /** Rollout workers, 1–8. */
  workers: number;
  /** Max staleness η: 0 synchronous, `Infinity` unbounded. */
  eta: number;
  /**
   * Staleness held fixed (the staleness sweep): with version v published, the rollout workers
   * play the weights of version max(0, v − playLag), so every batch is exactly that many versions
   * old, as AReaL's η is once rollouts run ahead. Needs η = 0 (rollout and training alternate)
   * and full versions (no LoRA). 0: the workers play the newest version.
   */
  playLag: number;
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
   * LoRA (DESIGN §4): train rank-r adapters on a frozen base, so that every version after
   * version 0 (the base) holds only the adapters; null trains every parameter.
   */
  lora: LoraConfig | null;
  /**
   * Start from a stored version of another run (its policy as it runs: a LoRA version merged
   * into its base), or from a built-in base, instead of fresh weights from `seed`; Adam starts
   * fresh. With `lora`, that policy is the frozen base the adapters adapt (fine-tuning it).
   */
  startFrom: StartFrom | null;
  /**
   * Train on these tasks instead of the built-in suite's training tasks: a copy of a saved suite
   * (e.g. "my tasks", written in the page), taken when it is chosen and stored with the run, so
   * that editing the suite later does not change what a run trained on. null: the built-in tasks.
   * Held-out tasks stay the built-in suite's (`run-tasks.ts`).
   */
  tasks: TaskSuite | null;
  /**
   * The kind of the built-in tasks the run trains and is evaluated on (DESIGN §3.1): `examples`
   * (enough examples shown to write the program) or `tooluse` (one shown; `<run>` reports on the
   * task's tests). A run stored before the field trained on `examples`.
   */
  taskKind: TaskKind;
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
    playLag: 0,
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
    taskKind: 'examples',
  };
}

/**
 * `s` set to train on `kind`'s built-in tasks, with the environment that kind is meant for. For
 * tool use, hindsight relabelling is off: a relabelled episode submits at once, which on tasks
 * that show one example would teach guessing instead of running.
 */
export function withTaskKind(s: RunSettings, kind: TaskKind): RunSettings {
  const hindsight =
    kind === 'tooluse' ? { ...s.code.hindsight, samplesPerBatch: 0, taskFraction: 0 } : s.code.hindsight;
  return { ...s, taskKind: kind, code: { ...s.code, env: envConfigOf(kind), hindsight } };
}

/** The largest seed: Rng keeps 32 bits, and the rollout lanes' `seed * 31 + lane` stays exact. */
export const MAX_SEED = 2 ** 31 - 1;

/**
 * Upper bounds of settings past what the run panel's controls offer (a share link or a stored
 * run may carry any value; the panel offers 1, 2 or 4 updates per batch, a link up to 32): each
 * well past its default, short of what breaks a run or the tab.
 */
export const SETTINGS_LIMITS = {
  /** Longest wait before a preemption, ms: an hour is never, in a run in a tab. */
  preemptAfterMs: 3_600_000,
  /** Trajectories held in memory (the replay buffer, the hindsight pool) or stored (the replay ring). */
  trajectories: 100_000,
  /** Newest versions kept in the store (a version of the full policy is about a megabyte). */
  keepVersions: 1000,
  /** Versions between milestones. */
  milestoneEvery: 1_000_000,
  /** A fixed lag, versions: past AReaL's largest η (32), and that many versions are held in each worker. */
  playLag: 64,
  /** Groups per training batch: with 32 episodes a group, 2 048 episodes a step. */
  tasksPerBatch: 64,
  /** Optimiser steps per batch (PPO epochs). */
  updatesPerBatch: 32,
  /** Adam's learning rate (the default is 3·10⁻³). */
  learningRate: 1,
  /** The gradient clip (global norm; the default is 0.5). */
  maxGradNorm: 1_000_000,
  /** Sampling temperature: at 10 the policy samples near uniformly already. */
  temperature: 10,
  /** Tasks drawn per job to pick the most valuable one from. */
  candidates: 100,
  /**
   * Episodes of each task the curriculum's success rate counts (a snapshot saved with every
   * version keeps that many results of each task of the level: ~115 KB for 115 medium tasks).
   */
  curriculumWindow: 1_000,
  /** Relabelled episodes added to a batch (the page offers up to 32). */
  hindsightSamples: 256,
  /** One-token variants relabelled beside each program (the page offers up to 4). */
  hindsightMutations: 64,
  /** Advantage of a relabelled episode's tokens (rewards are at most `MAX_REWARD_WEIGHT` a part). */
  hindsightAdvantage: MAX_REWARD_WEIGHT,
  /** LoRA alpha (the page sets 2 × rank). */
  loraAlpha: 256,
  /** Draws over which prioritized replay's β reaches 1. */
  betaDraws: 1_000_000,
} as const;

/** The policy's context (its learned positions): no batch row is longer. */
const POLICY_CONTEXT = DEFAULT_MODEL_ARGS.contextLength;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Throws `what must be an integer from min to max, got v` unless `v` is one. */
function checkInteger(what: string, v: unknown, min: number, max: number): void {
  if (!(Number.isInteger(v) && (v as number) >= min && (v as number) <= max))
    throw new Error(`${what} must be an integer from ${min} to ${max}, got ${shownNumber(v)}`);
}

/**
 * Throws unless `v` is a number from `min` to `max`; `above`: a number above `min` (`min`
 * itself refused), at most `max`.
 */
function checkNumber(what: string, v: unknown, min: number, max: number, above = false): void {
  if (typeof v === 'number' && (above ? v > min : v >= min) && v <= max) return;
  const range = above
    ? min === 0
      ? `a positive number up to ${max}`
      : `a number above ${min}, at most ${max}`
    : `a number from ${min} to ${max}`;
  throw new Error(`${what} must be ${range}, got ${shownNumber(v)}`);
}

function checkObject(what: string, v: unknown): void {
  if (!isPlainObject(v)) throw new Error(`${what} must be an object of settings, got ${shown(v)}`);
}

/**
 * Throws with a readable message when `s` cannot start a run: every field is checked for its
 * type and range (a share link or a stored run may carry anything), naming the field and the value.
 */
export function validateSettings(s: RunSettings): void {
  const L = SETTINGS_LIMITS;
  checkObject('the settings', s);
  checkObject('the code config', s.code);
  checkObject('the replay config', s.replay);
  checkObject('the curriculum config', s.code.curriculum);
  checkObject('the hindsight config', s.code.hindsight);
  checkInteger('rollout workers', s.workers, 1, 8);
  const eta: unknown = s.eta;
  if (typeof eta !== 'number' || !(eta >= 0))
    throw new Error(`η must be 0 or more (or unbounded), got ${shown(eta)}`);
  if (Number.isFinite(eta) && !Number.isInteger(eta)) throw new Error(`η must be an integer, got ${eta}`);
  checkInteger('the fixed lag', s.playLag, 0, L.playLag);
  if (s.playLag > 0 && s.eta !== 0)
    throw new Error(`a fixed lag holds the staleness itself: η must be 0 with it, got ${shown(s.eta)}`);
  if (s.playLag > 0 && s.lora !== null)
    throw new Error('a fixed lag plays older full versions: turn LoRA off to use it');
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
  oneOf('the task kind', s.taskKind, TASK_KINDS);
  checkInteger('the seed', s.seed, 0, MAX_SEED);
  checkInteger('the code config seed', s.code.seed, 0, MAX_SEED);
  // Past the context, a worker adopts at turn boundaries anyway.
  checkInteger('interruptEveryTokens', s.interruptEveryTokens, 0, POLICY_CONTEXT);
  checkInteger('preemptAfterMs', s.preemptAfterMs, 0, L.preemptAfterMs);
  checkInteger('keepConsumed', s.keepConsumed, 0, L.trajectories);
  checkInteger('tasksPerBatch', s.code.tasksPerBatch, 1, L.tasksPerBatch);
  checkInteger('groupSize', s.code.groupSize, 1, 32);
  checkInteger('slotsPerWorker', s.slotsPerWorker, 1, 32);
  checkInteger('keepVersions', s.keepVersions, 1, L.keepVersions);
  checkInteger('milestoneEvery', s.milestoneEvery, 1, L.milestoneEvery);
  // The replay buffer (DESIGN §5).
  checkInteger('replay capacity', s.replay.capacity, 1, L.trajectories);
  checkNumber('replay alpha', s.replay.alpha, 0, 1);
  checkNumber('replay beta0', s.replay.beta0, 0, 1);
  checkInteger('replay betaDraws', s.replay.betaDraws, 0, L.betaDraws);
  checkNumber('replay epsilon', s.replay.epsilon, 0, 1, true);
  // The optimiser and the advantages.
  checkNumber('learningRate', s.code.learningRate, 0, L.learningRate, true);
  checkNumber('maxGradNorm (the gradient clip)', s.code.maxGradNorm, 0, L.maxGradNorm, true);
  checkInteger('updatesPerBatch', s.code.updatesPerBatch, 1, L.updatesPerBatch);
  checkNumber('gamma (the GAE discount)', s.code.gamma, 0, 1);
  checkNumber('lambda (the GAE λ)', s.code.lambda, 0, 1);
  if (
    typeof s.code.lrHalfLife !== 'number' ||
    !(s.code.lrHalfLife >= 0) ||
    !Number.isFinite(s.code.lrHalfLife)
  )
    throw new Error(
      `the learning rate's half-life must be 0 (constant) or a number of versions, got ${shown(s.code.lrHalfLife)}`,
    );
  // Tasks and their sampling.
  checkInteger('candidates', s.code.candidates, 1, L.candidates);
  const valueWindow: unknown = s.code.valueWindow;
  if (!(
    valueWindow === 0 ||
    (typeof valueWindow === 'number' && valueWindow >= 1 && Number.isFinite(valueWindow))
  ))
    throw new Error(`valueWindow must be 0 or a number ≥ 1, got ${shown(valueWindow)}`);
  checkNumber('reviewFraction', s.code.reviewFraction, 0, 1);
  checkNumber('temperature', s.code.temperature, 0, L.temperature, true);
  const { curriculum, hindsight } = s.code;
  if (typeof curriculum.enabled !== 'boolean')
    throw new Error(`curriculum enabled must be true or false, got ${shown(curriculum.enabled)}`);
  checkInteger('curriculum window', curriculum.window, 1, L.curriculumWindow);
  checkNumber('curriculum promoteAt', curriculum.promoteAt, 0, 1, true);
  checkInteger('hindsight samplesPerBatch', hindsight.samplesPerBatch, 0, L.hindsightSamples);
  checkInteger('hindsight capacity', hindsight.capacity, 0, L.trajectories);
  checkNumber('hindsight uniformFraction', hindsight.uniformFraction, 0, 1);
  checkNumber('hindsight taskFraction', hindsight.taskFraction, 0, 1);
  checkInteger('hindsight mutations', hindsight.mutations, 0, L.hindsightMutations);
  checkNumber('hindsight advantage', hindsight.advantage, 0, L.hindsightAdvantage, true);
  // Past BIG, outputs are tokens of `big`: a relabelled task could not show them.
  checkNumber('hindsight maxAbsOutput', hindsight.maxAbsOutput, 0, BIG, true);
  // The environment and the batch length: an episode fills at most a row of a batch.
  checkInteger('contextLength (the batch length)', s.code.contextLength, 1, POLICY_CONTEXT);
  validateEnvConfig(s.code.env);
  if (s.code.env.contextLength > s.code.contextLength)
    throw new Error(
      `env contextLength must be at most contextLength, the batch length (${s.code.contextLength}): an episode fills a row of a batch, got ${s.code.env.contextLength}`,
    );
  if (s.lora !== null) {
    checkObject('LoRA', s.lora);
    checkInteger('LoRA rank', s.lora.rank, 1, MAX_LORA_RANK);
    checkNumber('LoRA alpha', s.lora.alpha, 0, L.loraAlpha, true);
  }
  if (s.startFrom !== null) checkStartKeys(s.startFrom);
  if (s.startFrom !== null && 'base' in s.startFrom) {
    if (!isBuiltInBase(s.startFrom.base))
      throw new Error(`start from: there is no built-in base ${shown(s.startFrom.base)}`);
  } else if (s.startFrom !== null) {
    const { runId, version } = s.startFrom;
    if (typeof runId !== 'string' || runId === '') throw new Error('start from: no run named');
    if (!Number.isInteger(version) || version < 0)
      throw new Error(`start from: the version must be a non-negative integer, got ${shown(version)}`);
  }
  validateRunTasks(s.tasks, s.level);
  if (s.slotsPerWorker * s.code.groupSize > 32)
    throw new Error(
      `a worker decodes at most 32 episodes: ${s.slotsPerWorker} slots × ${s.code.groupSize} is more`,
    );
}

/** A start point names a built-in base or a stored run's version, never a mix of the two. */
function checkStartKeys(from: unknown): void {
  checkObject('start from', from);
  const keys = Object.keys(from as object)
    .sort()
    .join(', ');
  if (keys !== 'base' && keys !== 'runId, version')
    throw new Error(`start from: name { base } or { runId, version }, got the keys ${keys || '(none)'}`);
}

/** What the trainer needs of a run's settings to build or restore its policy. */
export interface PolicySettings {
  seed: number;
  loss: RunSettings['loss'];
  learningRate: number;
  /** The gradient clip (global norm). */
  maxGradNorm: number;
  lora: LoraConfig | null;
}

/**
 * What the trainer builds its policy with for a run of these settings (a resumed run restores
 * its own newest version with them; a new one adds `startFrom`).
 */

export function policyReset(s: RunSettings): PolicySettings {
  const { learningRate, maxGradNorm } = s.code;
  return { seed: s.seed, loss: s.loss, learningRate, maxGradNorm, lora: s.lora };
}

/** The pipeline a run of these settings drives: its code config's batches, hindsight and env. */
export function pipelineConfigOf(s: RunSettings): PipelineConfig {
  const code = s.code;
  return {
    eta: s.eta,
    playLag: s.playLag,
    batchGroups: code.tasksPerBatch,
    groupSize: code.groupSize,
    slotsPerWorker: s.slotsPerWorker,
    preemptAfterMs: s.preemptAfterMs,
    replay: s.replay,
    env: code.env,
    relabelMaxAbs: code.hindsight.samplesPerBatch > 0 ? code.hindsight.maxAbsOutput : 0,
    relabelMutations: code.hindsight.mutations,
    seed: s.seed,
    maxJobFailures: 2,
  };
}

/** Settings as stored JSON (η = Infinity becomes null) and back. */
export function settingsToJson(s: RunSettings): Record<string, unknown> {
  return { ...s, eta: Number.isFinite(s.eta) ? s.eta : null };
}

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
 * its learning rate at once, and one trained on the programs it wrote alone would start relabelling
 * variants of them.
 */
const BEFORE_THE_FIELD = { code: { lrHalfLife: 0, valueWindow: 0, hindsight: { mutations: 0 } } };

/**
 * Settings from stored JSON. Fields added since a run was stored take their defaults, at every
 * depth (the code config, its hindsight, environment and curriculum configs), except those of
 * `BEFORE_THE_FIELD`, which keep the behaviour the run was trained with.
 */
export function settingsFromJson(json: Record<string, unknown>): RunSettings {
  const s = withDefaults(withDefaults(defaultSettings(), BEFORE_THE_FIELD), json) as RunSettings;
  // η is kept as stored (validation refuses a string or a boolean), null being unbounded.
  return { ...s, eta: json.eta === null ? Infinity : s.eta };
}
