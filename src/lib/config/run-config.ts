import { shown, shownNumber } from '../errors';
import { DEFAULT_ENV_CONFIG, MAX_REWARD_WEIGHT, validateEnvConfig, type EnvConfig } from '../env/config';
import { DEFAULT_CURRICULUM, type CurriculumConfig } from '../env/curriculum';
import {
  parseSuite,
  TASK_KINDS,
  TASK_SPLITS,
  type Level,
  type TaskKind,
  type TaskSplit,
  type TaskSuite,
} from '../env/suite';
import { envConfigOf } from '../env/task-kinds';
import { BIG } from '../env/tokenizer';
import { VOCAB_SIZE } from '../env/vocab';
import { isBuiltInBase, type BuiltInBase } from '../policy/bases';
import { DEFAULT_MODEL_ARGS, validateModelArgs, type ModelArgs } from '../policy/config';
import type { LoraConfig } from '../policy/lora';
import { DEFAULT_HINDSIGHT, type HindsightConfig } from '../rl/hindsight';
import {
  DEFAULT_LEARNER,
  SELECTIVE_IMPORTANCES,
  UPDATE_STRATEGIES,
  type LearnerConfig,
} from '../rl/learner-config';
import { DEFAULT_REPLAY, type ReplayConfig } from '../rl/replay-config';
import { DEFAULT_DOCTOR, type DoctorConfig } from './doctor-config';

/**
 * One run's configuration (DESIGN §11): every knob a code-writing run has, one typed object passed
 * whole, stored with the run, carried by share links, set by presets, the Settings view and the
 * bench's `--set group.field=value`. Each consumer takes the slice it needs.
 */
export interface RunConfig {
  /** The one seed: initial weights, task draws, each episode's sampling stream. */
  seed: number;
  /** What the run trains on and in what order. */
  task: TaskConfig;
  /** The code-writing environment: turns, context, sandbox limits, reward. */
  env: EnvConfig;
  /** The policy: its shape, where its weights start, what trains, how it samples. */
  policy: PolicyConfig;
  /** The update: loss, advantages, batch, optimiser (PPO hyperparameters). */
  learner: LearnerConfig;
  /** How batches are drawn from the replay buffer. */
  replay: ReplayConfig;
  /** Hindsight relabelling: solved episodes of tasks made from the policy's own programs. */
  hindsight: HindsightConfig;
  /** The asynchronous pipeline: workers, staleness, interrupts, scheduling. */
  pipeline: PipelineSettings;
  /** What the run keeps in IndexedDB. */
  storage: StorageConfig;
  /** The training doctor: when a detector over the run's recorded series speaks (`stats/doctor.ts`). */
  doctor: DoctorConfig;
}

/** What the trainer builds or restores a run's policy from: its seed, policy and learner. */
export type TrainerSlice = Pick<RunConfig, 'seed' | 'policy' | 'learner'>;

/** A stored version of a run, or a policy that ships with the page (`BUILT_IN_BASES`). */
export type StartFrom = { runId: string; version: number } | { base: BuiltInBase };

/** What a run trains on (DESIGN §3). */
export interface TaskConfig {
  /**
   * The kind of the built-in tasks trained and evaluated on (DESIGN §3.1): `examples` (enough
   * examples shown to write the program) or `tooluse` (one shown; `<run>` reports on its tests).
   */
  kind: TaskKind;
  /** Train on this level only (the learn bench trains on easy); every level under the curriculum otherwise. */
  level: Level | null;
  /**
   * Train on these tasks instead of the built-in training tasks: a copy of a saved suite, taken
   * when chosen and stored with the run. null: the built-in tasks. Held-out tasks stay built-in.
   */
  suite: TaskSuite | null;
  /** Easy → medium → hard, promoted on the level's success rate. */
  curriculum: CurriculumConfig;
  /**
   * Tasks drawn for each new job; the one with the highest expected learning value (success
   * rate nearest 0.5) is played (DESIGN §6). 1: uniform over the level.
   */
  candidates: number;
  /**
   * Attempts a task's success rate looks back over: each earlier attempt weighs 1 − 1/valueWindow
   * as much as the one after it. 0 counts every attempt alike.
   */
  valueWindow: number;
  /** Once promoted, the fraction of jobs that review an easier level (priority class `low`). */
  reviewFraction: number;
  /**
   * Tool-use tasks: the share of jobs shown a second example (a hint), faded per task as its
   * episodes succeed (share × (1 − the task's success)); 0: always one example.
   */
  hintFraction: number;
  /**
   * Tool-use tasks: the share of jobs begun near the goal, a wrong first program already run and
   * its report shown, faded as those starts get solved (share × (1 − their solved rate)).
   */
  openingFraction: number;
  /**
   * Tool-use runs on the built-in tasks: train also on the wide families' functions (wider
   * constants, more shapes; none computes a held-out or generalisation task), so that the
   * training tasks are too many to look up.
   */
  wide: boolean;
  /**
   * How the built-in tasks split into training and held-out: `families`, a seeded quarter of each
   * of the eight families; `compositional`, a procedural space of ~1 500 functions whose held-out
   * tasks combine parts (a constant in a role) that training tasks of their level use apart.
   */
  split: TaskSplit;
}

/** The policy a run trains (DESIGN §4). */
export interface PolicyConfig {
  /** Shape of the transformer for fresh weights (a start point brings its own). */
  model: ModelArgs;
  /**
   * Start from a stored version of another run, or from a built-in base, instead of fresh
   * weights from `seed`; Adam starts fresh. With `lora`, that policy is the frozen base.
   */
  startFrom: StartFrom | null;
  /** Train rank-r adapters on a frozen base (every later version holds only them); null: every parameter. */
  lora: LoraConfig | null;
  /** Sampling temperature of the rollouts (> 1 explores more; the decoupled loss's w corrects for it). */
  temperature: number;
}

/**
 * How jobs are chosen (`pipeline.schedule`, DESIGN §6): by learning value (the default), in
 * arrival order, or by expected reward.
 */
export type ScheduleKind = 'learning-value' | 'fifo' | 'expected-reward';

export const SCHEDULES: readonly ScheduleKind[] = ['learning-value', 'fifo', 'expected-reward'];

/** The asynchronous pipeline (DESIGN §5, §6). */
export interface PipelineSettings {
  /** Rollout workers, 1–8. */
  workers: number;
  /** Max staleness η: 0 synchronous, `Infinity` unbounded. */
  eta: number;
  /**
   * Staleness held fixed (the staleness sweep): with version v published, the workers play the
   * weights of version max(0, v − playLag). Needs η = 0 and full versions (no LoRA). 0: newest.
   */
  playLag: number;
  /** Groups each rollout worker plays at once. */
  slotsPerWorker: number;
  /**
   * A worker adopts a new version at the next turn boundary of its episodes, or after this many
   * decode steps if that comes first (0: at turn boundaries only; 1: the next token, as AReaL).
   */
  interruptEveryTokens: number;
  /** A waiting job of a higher class preempts after this long, ms. */
  preemptAfterMs: number;
  /**
   * New jobs drawn ahead to wait in the ordered queue while every slot is busy (0: a job is drawn
   * only when a slot frees, so only requeued and preempted jobs ever wait).
   */
  queueAhead: number;
  /**
   * `expected-reward`: a waiting job preempts the running job of the lowest expected return when
   * its own is higher by at least this (after `preemptAfterMs`); the victim resumes later from
   * what it played. Past the largest return (about 1.3 by default): never.
   */
  preemptMargin: number;
  /**
   * Each slot's budget of sandbox ms per episode (0: none). A job starts on a worker only while
   * its jobs' expected costs (their tasks' recent means) fit; a group over it is an overrun.
   */
  budgetSandboxMs: number;
  /** Each slot's budget of policy tokens per episode (0: none), like `budgetSandboxMs`. */
  budgetTokens: number;
  /**
   * How jobs are chosen (DESIGN §6): `learning-value` plays the drawn task whose success rate is
   * nearest 0.5 and orders waiting jobs by class, then that value; `fifo` plays the first task
   * drawn and starts waiting jobs in arrival order; `expected-reward` plays the drawn task of the
   * highest expected return (a running mean of its recent returns, an untried task optimistic)
   * and orders waiting jobs by class, then that return.
   */
  schedule: ScheduleKind;
}

/** Retention of the run's versions and trajectories (DESIGN §7). */
export interface StorageConfig {
  /** Newest versions kept. */
  keepVersions: number;
  /** Every n-th version kept as a milestone. */
  milestoneEvery: number;
  /** Consumed trajectories kept in the store (the replay ring). */
  keepConsumed: number;
}

/** The largest LoRA rank the page offers (d_model is 64: a rank past 16 saves little). */
export const MAX_LORA_RANK = 16;

/** The default number of rollout workers: min(4, cores − 1), at least 1. */
export function defaultWorkers(cores: number | undefined): number {
  return Math.max(1, Math.min(4, (cores ?? 2) - 1));
}

/** The defaults of a new run on a machine with `cores` cores. */
export function defaultRunConfig(cores?: number): RunConfig {
  return {
    seed: 1,
    task: {
      kind: 'examples',
      level: null,
      suite: null,
      curriculum: DEFAULT_CURRICULUM,
      candidates: 2,
      valueWindow: 0,
      reviewFraction: 0.1,
      hintFraction: 0,
      openingFraction: 0,
      wide: false,
      split: 'families',
    },
    env: DEFAULT_ENV_CONFIG,
    policy: { model: DEFAULT_MODEL_ARGS, startFrom: null, lora: null, temperature: 1 },
    learner: DEFAULT_LEARNER,
    replay: DEFAULT_REPLAY,
    hindsight: DEFAULT_HINDSIGHT,
    pipeline: {
      workers: defaultWorkers(cores),
      eta: 4,
      playLag: 0,
      slotsPerWorker: 2,
      interruptEveryTokens: 1,
      preemptAfterMs: 500,
      queueAhead: 0,
      preemptMargin: 0.5,
      budgetSandboxMs: 0,
      budgetTokens: 0,
      schedule: 'learning-value',
    },
    storage: { keepVersions: 5, milestoneEvery: 10, keepConsumed: 2048 },
    doctor: DEFAULT_DOCTOR,
  };
}

/** A run config with some fields given at any depth (presets, the bench, tests). */
export type RunOverrides = { [K in keyof RunConfig]?: DeepPartial<RunConfig[K]> };
type DeepPartial<T> = T extends readonly unknown[]
  ? T
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> }
    : T;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `over` laid on `base` object by object at every depth; arrays, suites, start points and null replace whole. */
function merged(base: unknown, over: unknown): unknown {
  if (over === undefined) return base;
  const whole = isPlainObject(over) && ('tasks' in over || 'base' in over || 'runId' in over);
  if (!isPlainObject(base) || !isPlainObject(over) || whole) return over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = merged(base[k], v);
  return out;
}

/** `over` laid on `base`: both sets of fields, `over`'s where they meet. */
export function withinOverrides(base: RunOverrides, over: RunOverrides): RunOverrides {
  return merged(base, over) as RunOverrides;
}

/** `config` with `overrides` set (a new object). */
export function withOverrides(config: RunConfig, overrides: RunOverrides): RunConfig {
  return merged(config, overrides) as RunConfig;
}

/**
 * `c` set to train on `kind`'s built-in tasks, with the environment that kind is meant for. For
 * tool use, hindsight relabelling is off: a relabelled episode submits at once, which on tasks
 * that show one example would teach guessing instead of running.
 */
export function withTaskKind(c: RunConfig, kind: TaskKind): RunConfig {
  const hindsight =
    kind === 'tooluse' ? { ...c.hindsight, samplesPerBatch: 0, taskFraction: 0 } : c.hindsight;
  return { ...c, task: { ...c.task, kind }, env: envConfigOf(kind), hindsight };
}

/** The largest seed: Rng keeps 32 bits, and the rollout lanes' `seed * 31 + lane` stays exact. */
export const MAX_SEED = 2 ** 31 - 1;

/** A numeric field's allowed values: an integer or a number from `min` to `max` (`above`: min excluded). */
export interface NumberLimits {
  integer: boolean;
  min: number;
  max: number;
  above?: boolean;
}

const int = (min: number, max: number): NumberLimits => ({ integer: true, min, max });
const num = (min: number, max: number, above = false): NumberLimits => ({ integer: false, min, max, above });

/**
 * The limits of every numeric field a run checks here, by path (the environment's own fields are
 * checked by `validateEnvConfig`). Past what the Settings view offers, each is well past its
 * default and short of what breaks a run or the tab.
 */
export const RUN_CONFIG_LIMITS: Readonly<Record<string, NumberLimits>> = {
  seed: int(0, MAX_SEED),
  'task.curriculum.window': int(1, 1_000),
  'task.curriculum.promoteAt': num(0, 1, true),
  'task.candidates': int(1, 100),
  'task.reviewFraction': num(0, 1),
  'task.hintFraction': num(0, 1),
  'task.openingFraction': num(0, 1),
  'policy.temperature': num(0, 10, true),
  'policy.lora.rank': int(1, MAX_LORA_RANK),
  'policy.lora.alpha': num(0, 256, true),
  'learner.gamma': num(0, 1),
  'learner.turnBonus': num(0, 10),
  'learner.lambda': num(0, 1),
  'learner.tasksPerBatch': int(1, 64),
  'learner.groupSize': int(1, 32),
  'learner.updatesPerBatch': int(1, 32),
  'learner.learningRate': num(0, 1, true),
  'learner.lrHalfLife': num(0, 1e9),
  'learner.maxGradNorm': num(0, 1_000_000, true),
  'learner.clipEps': num(0, 1, true),
  'learner.wCap': num(1, 1_000),
  'learner.valueCoef': num(0, 100),
  'learner.entropyCoef': num(0, 10),
  'learner.entropyFloor': num(0, 10),
  'learner.rewardQuality': num(0, 10),
  'learner.rewardEfficiency': num(0, 10),
  'learner.rewardResource': num(0, 10),
  'learner.contextLength': int(1, DEFAULT_MODEL_ARGS.contextLength),
  // At most the model's blocks (checked against it below).
  'learner.frozenBlocks': int(0, 64),
  'learner.adaptiveUp': num(1, 10),
  'learner.adaptiveDown': num(0, 1, true),
  'learner.adaptiveMinRate': num(0, 1, true),
  'learner.adaptiveMaxRate': num(0, 1, true),
  'learner.trendThreshold': num(0, 1),
  'learner.trendSpan': int(1, 1_000),
  // Below 1: the most important tensor (1 after normalising) always trains.
  'learner.selectiveThreshold': num(0, 0.99),
  'learner.gradualEvery': int(1, 1_000_000),
  'learner.autoWindow': int(2, 10_000),
  'learner.autoMinStability': num(0, 1),
  'learner.importanceEvery': int(0, 1_000_000),
  'replay.capacity': int(1, 100_000),
  'replay.alpha': num(0, 1),
  'replay.beta0': num(0, 1),
  'replay.betaDraws': int(0, 1_000_000),
  'replay.epsilon': num(0, 1, true),
  'hindsight.samplesPerBatch': int(0, 256),
  'hindsight.advantage': num(0, MAX_REWARD_WEIGHT, true),
  'hindsight.capacity': int(0, 100_000),
  'hindsight.uniformFraction': num(0, 1),
  // Past BIG, outputs are tokens of `big`: a relabelled task could not show them.
  'hindsight.maxAbsOutput': num(0, BIG, true),
  'hindsight.taskFraction': num(0, 1),
  'hindsight.mutations': int(0, 64),
  'pipeline.workers': int(1, 8),
  // Past AReaL's largest η (32); that many versions are held in each worker.
  'pipeline.playLag': int(0, 64),
  'pipeline.slotsPerWorker': int(1, 32),
  // Past the context, a worker adopts at turn boundaries anyway.
  'pipeline.interruptEveryTokens': int(0, DEFAULT_MODEL_ARGS.contextLength),
  // An hour is never, in a run in a tab.
  'pipeline.preemptAfterMs': int(0, 3_600_000),
  'pipeline.queueAhead': int(0, 64),
  // Returns lie within about ±1.5 (DESIGN §3): a margin past that never preempts.
  'pipeline.preemptMargin': num(0, 100),
  // A minute of sandbox time per episode is far past any program's time limit.
  'pipeline.budgetSandboxMs': num(0, 60_000),
  'pipeline.budgetTokens': int(0, DEFAULT_MODEL_ARGS.contextLength),
  'storage.keepVersions': int(1, 1_000),
  'storage.milestoneEvery': int(1, 1_000_000),
  'storage.keepConsumed': int(0, 100_000),
  'doctor.warmup': int(0, 1_000_000),
  'doctor.plateauGrace': int(0, 1_000_000),
  'doctor.clearAfter': int(1, 10_000),
  // A line needs a few points; past a million versions a run in a tab never gets.
  'doctor.trendWindow': int(10, 1_000_000),
  'doctor.stagnantReturn': num(0, MAX_REWARD_WEIGHT),
  'doctor.stagnantSuccess': num(0, 1),
  'doctor.fallingReturn': num(0, MAX_REWARD_WEIGHT, true),
  'doctor.fallingSuccess': num(0, 1, true),
  'doctor.lossWindow': int(2, 1_000_000),
  'doctor.lossStd': num(0, 1_000_000, true),
  'doctor.entropyWindow': int(1, 1_000_000),
  'doctor.entropyFloor': num(0, 1),
  'doctor.spreadWindow': int(1, 1_000_000),
  'doctor.spreadDrop': num(0, 1),
  'doctor.valueWindow': int(1, 1_000_000),
  'doctor.valueGrowth': num(1, 1_000_000, true),
  'doctor.spikeWindow': int(2, 1_000_000),
  'doctor.spikeFactor': num(1, 1_000_000, true),
  'doctor.spikeCount': int(1, 1_000_000),
  'doctor.updateWindow': int(1, 1_000_000),
  'doctor.maxKl': num(0, 1_000, true),
  'doctor.maxClipFrac': num(0, 1),
  'doctor.saturatedAt': num(0, 1, true),
  'doctor.saturationWindow': int(1, 1_000_000),
  'doctor.stalePpo': num(0, 1_000_000),
  'doctor.staleDecoupled': num(0, 1_000_000),
  'doctor.maxMasked': num(0, 1),
  'doctor.programWindow': int(1, 10_000),
  'doctor.constantShare': num(0, 1, true),
  'doctor.sameShare': num(0, 1, true),
};

/** The allowed values of every field that takes one of a list, by path. */
export const RUN_CONFIG_CHOICES: Readonly<Record<string, readonly unknown[]>> = {
  'task.kind': TASK_KINDS,
  'task.level': [null, 'easy', 'medium', 'hard'],
  'task.curriculum.enabled': [true, false],
  'task.wide': [true, false],
  'task.split': TASK_SPLITS,
  'learner.loss': ['decoupled', 'ppo'],
  'learner.estimator': ['rloo', 'grpo', 'gae', 'turn'],
  'learner.strategy': UPDATE_STRATEGIES,
  'learner.selectiveBy': SELECTIVE_IMPORTANCES,
  'learner.dropVoid': [true, false],
  'learner.freezeEmbeddings': [true, false],
  'learner.freezeHeads': [true, false],
  'replay.mode': ['fifo', 'prioritized'],
  'pipeline.schedule': SCHEDULES,
};

/** One settable field of a config: its path, value, and what it may be (a range or a list). */
export interface ConfigField {
  path: string;
  value: number | boolean | string | null;
  limits?: NumberLimits;
  choices?: readonly unknown[];
}

/**
 * Every number, flag and choice of `c`, group by group, in declaration order (the Settings
 * view's "every setting"): objects are walked, suites, start points and absent LoRA left to
 * their own controls.
 */
export function configFields(c: RunConfig): ConfigField[] {
  const out: ConfigField[] = [];
  const walk = (v: unknown, path: string) => {
    if (isPlainObject(v)) {
      if (path === 'task.suite' || path === 'policy.startFrom') return;
      for (const [k, x] of Object.entries(v)) walk(x, path ? `${path}.${k}` : k);
      return;
    }
    const choices = RUN_CONFIG_CHOICES[path];
    if (choices) out.push({ path, value: v as ConfigField['value'], choices });
    else if (typeof v === 'number' || typeof v === 'boolean')
      out.push({ path, value: v, ...(RUN_CONFIG_LIMITS[path] ? { limits: RUN_CONFIG_LIMITS[path] } : {}) });
  };
  walk(c, '');
  return out;
}

/** The value at `path` (dot-separated) of `obj`, or undefined. */
export function fieldAt(obj: unknown, path: string): unknown {
  let at: unknown = obj;
  for (const k of path.split('.')) at = isPlainObject(at) ? at[k] : undefined;
  return at;
}

/** Throws `path must be …, got v` unless `v` is within `limits`. */
function checkNumberField(path: string, v: unknown, l: NumberLimits): void {
  const ok =
    typeof v === 'number' &&
    (l.above ? v > l.min : v >= l.min) &&
    v <= l.max &&
    (!l.integer || Number.isInteger(v));
  if (ok) return;
  throw new Error(`${path} must be ${rangeText(l)}, got ${shownNumber(v)}`);
}

/** What a numeric field may be, as messages and the Settings view say it. */
export function rangeText(l: NumberLimits): string {
  if (l.integer) return `an integer from ${l.min} to ${l.max}`;
  return l.above ? `a number above ${l.min}, at most ${l.max}` : `a number from ${l.min} to ${l.max}`;
}

/** Throws with a readable message when `tasks` cannot be a run's own training tasks. */
export function validateRunTasks(tasks: TaskSuite | null, level: Level | null): void {
  if (tasks === null) return;
  const parsed = parseSuite(JSON.stringify(tasks));
  if (!parsed.ok) throw new Error(`task.suite: ${parsed.path}: ${parsed.message}`);
  if (level && !parsed.suite.tasks.some((t) => t.level === level))
    throw new Error(`task.suite ("${tasks.name}") has no ${level} task`);
}

/**
 * Throws with a readable message when `c` cannot start a run: every field is checked for its
 * type and range (a share link or a stored run may carry anything), naming its path and the value.
 */
export function validateRunConfig(c: RunConfig): void {
  if (!isPlainObject(c)) throw new Error(`the run config must be an object, got ${shown(c)}`);
  for (const group of Object.keys(defaultRunConfig()) as (keyof RunConfig)[])
    if (group !== 'seed' && !isPlainObject(c[group]))
      throw new Error(`${group} must be an object of settings, got ${shown(c[group])}`);
  if (!isPlainObject(c.task.curriculum))
    throw new Error(`task.curriculum must be an object of settings, got ${shown(c.task.curriculum)}`);
  for (const [path, allowed] of Object.entries(RUN_CONFIG_CHOICES)) {
    const v = fieldAt(c, path);
    if (!allowed.includes(v))
      throw new Error(
        `${path} must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}, got ${JSON.stringify(v) ?? 'nothing'}`,
      );
  }
  if (c.policy.lora !== null && !isPlainObject(c.policy.lora))
    throw new Error(`policy.lora must be null or { rank, alpha }, got ${shown(c.policy.lora)}`);
  for (const [path, limits] of Object.entries(RUN_CONFIG_LIMITS)) {
    if (path.startsWith('policy.lora.') && c.policy.lora === null) continue;
    checkNumberField(path, fieldAt(c, path), limits);
  }
  const eta: unknown = c.pipeline.eta;
  if (typeof eta !== 'number' || !(eta >= 0) || (Number.isFinite(eta) && !Number.isInteger(eta)))
    throw new Error(`pipeline.eta (η) must be an integer from 0 up, or unbounded, got ${shown(eta)}`);
  if (c.pipeline.playLag > 0 && c.pipeline.eta !== 0)
    throw new Error(
      `pipeline.playLag holds the staleness itself: pipeline.eta must be 0 with it, got ${shown(eta)}`,
    );
  if (c.pipeline.playLag > 0 && c.policy.lora !== null)
    throw new Error('pipeline.playLag plays older full versions: set policy.lora to null to use it');
  const valueWindow: unknown = c.task.valueWindow;
  if (!(
    valueWindow === 0 ||
    (typeof valueWindow === 'number' && valueWindow >= 1 && Number.isFinite(valueWindow))
  ))
    throw new Error(`task.valueWindow must be 0 or a number ≥ 1, got ${shown(valueWindow)}`);
  checkModel(c.policy.model);
  checkStrategy(c);
  checkRewardMix(c);
  if (c.learner.contextLength > c.policy.model.contextLength)
    throw new Error(
      `learner.contextLength must be at most policy.model.contextLength (${c.policy.model.contextLength}), got ${c.learner.contextLength}`,
    );
  try {
    validateEnvConfig(c.env);
  } catch (err) {
    throw new Error(err instanceof Error ? err.message.replace(/^env /, 'env.') : String(err), {
      cause: err,
    });
  }
  if (c.env.contextLength > c.learner.contextLength)
    throw new Error(
      `env.contextLength must be at most learner.contextLength, the batch length (${c.learner.contextLength}): an episode fills a row of a batch, got ${c.env.contextLength}`,
    );
  checkStartFrom(c.policy.startFrom);
  validateRunTasks(c.task.suite, c.task.level);
  if (c.pipeline.slotsPerWorker * c.learner.groupSize > 32)
    throw new Error(
      `a worker decodes at most 32 episodes: pipeline.slotsPerWorker ${c.pipeline.slotsPerWorker} × learner.groupSize ${c.learner.groupSize} is more`,
    );
}

/** The update strategy fits the policy: LoRA is its own strategy, frozen layers leave something to train. */
function checkStrategy(c: RunConfig): void {
  const l = c.learner;
  if (l.strategy === 'lora' && c.policy.lora === null)
    throw new Error('learner.strategy lora trains LoRA adapters: set policy.lora ({ rank, alpha }) too');
  if (c.policy.lora !== null && l.strategy !== 'full' && l.strategy !== 'lora')
    throw new Error(
      `learner.strategy ${l.strategy} chooses among every parameter: with policy.lora set it must be lora (or full)`,
    );
  if (l.frozenBlocks > c.policy.model.nLayers)
    throw new Error(
      `learner.frozenBlocks must be at most policy.model.nLayers (${c.policy.model.nLayers}), got ${l.frozenBlocks}`,
    );
  if (
    l.strategy === 'frozen' &&
    l.freezeEmbeddings &&
    l.freezeHeads &&
    l.frozenBlocks === c.policy.model.nLayers
  )
    throw new Error('learner.strategy frozen with every layer frozen leaves nothing to train');
  if (l.adaptiveMinRate > l.adaptiveMaxRate)
    throw new Error(
      `learner.adaptiveMinRate must be at most learner.adaptiveMaxRate (${l.adaptiveMaxRate}), got ${l.adaptiveMinRate}`,
    );
}

/** The reward mix: its extra terms need a group estimator, its resource term a sandbox budget. */
function checkRewardMix(c: RunConfig): void {
  const l = c.learner;
  if ((l.rewardEfficiency > 0 || l.rewardResource > 0) && l.estimator !== 'rloo' && l.estimator !== 'grpo')
    throw new Error(
      `learner.rewardEfficiency and rewardResource mix into an episode's return: they need learner.estimator rloo or grpo, not ${l.estimator}`,
    );
  if (l.rewardResource > 0 && !(c.pipeline.budgetSandboxMs > 0))
    throw new Error(
      'learner.rewardResource scores sandbox ms against the slot budget: set pipeline.budgetSandboxMs too',
    );
}

/** The policy's shape: the page's vocabulary, dimensions a model can have. */
function checkModel(model: unknown): void {
  if (!isPlainObject(model))
    throw new Error(`policy.model must be an object of model args, got ${shown(model)}`);
  const args = model as unknown as ModelArgs;
  try {
    validateModelArgs(args);
  } catch (err) {
    throw new Error(`policy.model: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  if (args.vocabSize !== VOCAB_SIZE)
    throw new Error(
      `policy.model.vocabSize must be the page's vocabulary, ${VOCAB_SIZE}, got ${args.vocabSize}`,
    );
  if (args.contextLength > 256)
    throw new Error(`policy.model.contextLength must be an integer from 1 to 256, got ${args.contextLength}`);
}

/** A start point names a built-in base or a stored run's version, never a mix of the two. */
function checkStartFrom(from: unknown): void {
  if (from === null) return;
  if (!isPlainObject(from)) throw new Error(`policy.startFrom must be null or an object, got ${shown(from)}`);
  const keys = Object.keys(from).sort().join(', ');
  if (keys !== 'base' && keys !== 'runId, version')
    throw new Error(
      `policy.startFrom: name { base } or { runId, version }, got the keys ${keys || '(none)'}`,
    );
  if ('base' in from) {
    if (!isBuiltInBase(from.base))
      throw new Error(`policy.startFrom: there is no built-in base ${shown(from.base)}`);
    return;
  }
  if (typeof from.runId !== 'string' || from.runId === '') throw new Error('policy.startFrom: no run named');
  if (!Number.isInteger(from.version) || (from.version as number) < 0)
    throw new Error(
      `policy.startFrom: the version must be a non-negative integer, got ${shown(from.version)}`,
    );
}

/** Fields a config may have that the defaults leave out (absent: off): `--set` takes them too. */
export const OPTIONAL_FIELDS: readonly string[] = [
  'env.reportFailures',
  'policy.model.pointerDim',
  'policy.model.tieEmbeddings',
];

/**
 * `c` with the field at `path` set from `text` (the bench's `--set path=value`): a number, true,
 * false, null, Infinity, or JSON. Throws naming the field when it is not one `c` has, or when the
 * result is not a valid run config.
 */
export function withField(c: RunConfig, path: string, text: string): RunConfig {
  const keys = path.split('.');
  if (!hasPath(c, keys) && !OPTIONAL_FIELDS.includes(path))
    throw new Error(`--set ${path}: there is no such field (the groups: ${Object.keys(c).join(', ')})`);
  const value = parseValue(text);
  let over: unknown = value;
  for (const k of [...keys].reverse()) over = { [k]: over };
  const next = withOverrides(c, over as RunOverrides);
  try {
    validateRunConfig(next);
  } catch (err) {
    throw new Error(`--set ${path}=${text}: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  }
  return next;
}

/**
 * The overrides of a list of `path=value` settings (the bench's and the node scripts' `--set`),
 * each checked on `base` in turn: throws naming the field and its range at the first bad one.
 * (`set-list.ts` checks a list whole where one setting needs another given after it.)
 */
export function overridesFromSets(
  sets: readonly string[],
  base: RunConfig = defaultRunConfig(),
): RunOverrides {
  let config = base;
  let overrides: RunOverrides = {};
  for (const set of sets) {
    const [path, text] = splitSet(set);
    config = withField(config, path, text);
    overrides = withinOverrides(overrides, nested(path, fieldAt(config, path)));
  }
  return overrides;
}

/** `path=value` as its two halves. */
export function splitSet(set: string): [string, string] {
  const eq = set.indexOf('=');
  if (eq <= 0) throw new Error(`--set ${set}: write it as group.field=value, e.g. learner.clipEps=0.1`);
  return [set.slice(0, eq), set.slice(eq + 1)];
}

/** `value` at `path` as overrides (`a.b` → `{ a: { b: value } }`). */
export function nested(path: string, value: unknown): RunOverrides {
  let over = value;
  for (const k of path.split('.').reverse()) over = { [k]: over };
  return over as RunOverrides;
}

export function hasPath(obj: unknown, keys: readonly string[]): boolean {
  let at: unknown = obj;
  for (const k of keys) {
    if (!isPlainObject(at) || !(k in at)) return false;
    at = at[k];
  }
  return true;
}

export function parseValue(text: string): unknown {
  if (text === 'Infinity' || text === 'inf') return Infinity;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The config as stored JSON (η = Infinity becomes null). */
export function runConfigToJson(c: RunConfig): Record<string, unknown> {
  return { ...c, pipeline: { ...c.pipeline, eta: Number.isFinite(c.pipeline.eta) ? c.pipeline.eta : null } };
}

/**
 * What a run stored before these fields existed trained with, where today's default would change
 * how it goes on: a resumed constant-rate run at version 1 500 would otherwise drop to a fifth of
 * its learning rate at once, and one trained on the programs it wrote alone would start
 * relabelling variants of them.
 */
const BEFORE_THE_FIELD = { code: { lrHalfLife: 0, valueWindow: 0, hindsight: { mutations: 0 } } };

/** A stored field's value over its default, object by object at every depth. */
function withDefaults(base: unknown, stored: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(stored)) return stored === undefined ? base : stored;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(stored)) out[k] = withDefaults(base[k], v);
  return out;
}

/**
 * A config from stored JSON: a stored run's or a share link's. Fields added since it was stored
 * take their defaults at every depth; a run stored in the older flat form (`{ workers, eta, …,
 * code: { … } }`) is read into the groups, keeping the behaviour it was trained with.
 */
export function runConfigFromJson(json: Record<string, unknown>): RunConfig {
  const grouped = 'code' in json || 'workers' in json ? fromFlatSettings(json) : json;
  const c = withDefaults(defaultRunConfig(), grouped) as RunConfig;
  const pipeline: unknown = grouped.pipeline;
  // η is kept as stored (validation refuses a string or a boolean), null being unbounded.
  const eta = isPlainObject(pipeline) && pipeline.eta === null ? Infinity : c.pipeline.eta;
  return { ...c, pipeline: { ...c.pipeline, eta } };
}

/** The older flat settings (a run or link from before the groups) as groups. */
function fromFlatSettings(json: Record<string, unknown>): Record<string, unknown> {
  const old = withDefaults(BEFORE_THE_FIELD, json) as Record<string, unknown>;
  const code = (isPlainObject(old.code) ? old.code : {}) as Record<string, unknown>;
  const pick = (from: Record<string, unknown>, keys: readonly string[]) =>
    Object.fromEntries(keys.filter((k) => from[k] !== undefined).map((k) => [k, from[k]]));
  return {
    seed: old.seed,
    task: {
      ...pick(code, ['curriculum', 'candidates', 'valueWindow', 'reviewFraction']),
      ...(old.taskKind !== undefined ? { kind: old.taskKind } : {}),
      ...(old.level !== undefined ? { level: old.level } : {}),
      ...(old.tasks !== undefined ? { suite: old.tasks } : {}),
    },
    ...pick(code, ['env', 'hindsight']),
    policy: {
      ...pick(code, ['temperature']),
      ...pick(old, ['lora', 'startFrom']),
    },
    learner: {
      ...pick(old, ['loss']),
      ...pick(code, [
        'estimator',
        'gamma',
        'lambda',
        'tasksPerBatch',
        'groupSize',
        'updatesPerBatch',
        'learningRate',
        'lrHalfLife',
        'maxGradNorm',
        'contextLength',
      ]),
    },
    ...pick(old, ['replay']),
    pipeline: pick(old, [
      'workers',
      'eta',
      'playLag',
      'slotsPerWorker',
      'interruptEveryTokens',
      'preemptAfterMs',
    ]),
    storage: pick(old, ['keepVersions', 'milestoneEvery', 'keepConsumed']),
  };
}
