/**
 * One PPO update of the policy on a batch, in the order CleanRL's ppo.py reads:
 *   1. advantages — one per episode against its group (RLOO, GRPO) or per token (GAE), in the batch
 *   2. π_prox     — the policy before the update, held fixed across its epochs (AReaL)
 *   3. epochs     — `updates` optimiser steps on the whole batch
 *   4. the loss   — standard or decoupled PPO over the policy's tokens, value loss, entropy bonus
 *   5. the step   — gradient, clipped by global norm, checked finite, applied by Adam
 * Both policies train through `ppoUpdate`: the transformer (`PolicyTrainer`, from the trainer
 * worker and the node bench) and a custom environment's MLP (`MlpLearner`).
 */
import * as tf from '@tensorflow/tfjs';
import { STEP_NOT_APPLIED, type StepMetrics } from '../policy/metrics';
import type { PolicyOutput } from '../policy/model';
import { legalFor, validateBatch, type PpoBatch, type TokenBatch } from './batch';
import { actionLogProbs, clipByGlobalNorm, constantOf, maskedMean } from './losses';
import { decoupledPpoLoss, ppoClipLoss } from './ppo';
import { type TrainerConfig } from './learner-config';

/** The settings of the loss and the step. */
export type PpoConfig = Pick<
  TrainerConfig,
  'loss' | 'clipEps' | 'wCap' | 'valueCoef' | 'entropyCoef' | 'maxGradNorm'
> &
  Partial<Pick<TrainerConfig, 'entropyFloor'>>;

/**
 * What an update needs of the policy it trains: the transformer (`PolicyTrainer`, token batches)
 * and the MLP (`MlpLearner`, batches of observations). `B` is the batch the policy trains on: the
 * per-position arrays and what the policy's input is made of.
 */
export interface PpoPolicy<B extends PpoBatch = TokenBatch> {
  readonly config: PpoConfig;
  /** Adam, whose rate a schedule sets per update (the moments stay). */
  readonly optimizer: Pick<tf.Optimizer, 'applyGradients'> & { rate: number };
  /** Optimiser steps taken so far. */
  step: number;
  /** Actions the policy chooses among (V, the logits' last axis). */
  readonly numActions: number;
  /** The variables a step trains: every parameter, or the LoRA adapters. */
  trainable(): tf.Variable[];
  /** The batch's input to `forward` (tokens [B, T], observations [N, I]); the caller disposes it. */
  input(batch: B): tf.Tensor2D;
  /** Logits [B, T, V] and values [B, T] under the weights the policy runs with (LoRA merged). */
  forward(input: tf.Tensor2D): PolicyOutput;
  /**
   * Before an update: an update strategy (`strategy.ts`) chooses the tensors that train and the
   * rate, which it returns (undefined: the optimiser's as it is).
   */
  beginUpdate?(u: UpdateContext): Promise<number | undefined>;
  /** Each step's gradients (clipped, finite) by variable name, before the optimiser applies them. */
  observeGradients?(grads: Readonly<Record<string, tf.Tensor>>): void;
}

/** What an update strategy learns of the update about to run. */
export interface UpdateContext {
  /** The version the update makes from. */
  version?: number;
  /** The batch's performance in [0, 1] (its episodes' success share). */
  performance?: number;
  /** The scheduled rate. */
  rate?: number;
}

// ---- 1. advantages -----------------------------------------------------------------------
// The batch arrives with them, and the update takes them as they are (it never normalises):
// each policy's are estimated when its batch is packed. The transformer's by the page's job
// source (RLOO, GRPO in `advantages.ts`, GAE in `trajectory.ts`), scaled by prioritized replay's
// importance weights, off this module so that the page's thread never loads tfjs; the MLP's by
// its learner, which holds the value head (`normalisedAdvantages`, `MlpLearner.ppoBatch`).

// ---- 2. π_prox ---------------------------------------------------------------------------

/**
 * Whether π_prox is computed apart, once before the epochs: with several steps, for the
 * decoupled loss, and for PPO when the batch has relabelled rows (their unknown π_behav is NaN;
 * π_prox stands in). With one step, the step takes it from its own forward pass (one pass less).
 */
export function proximalApart(loss: TrainerConfig['loss'], batch: PpoBatch, updates: number): boolean {
  const behav = batch.behavLogp;
  return updates > 1 && behav !== undefined && (loss === 'decoupled' || behav.some(Number.isNaN));
}

/**
 * π_prox: log-probabilities of the batch's actions under the current weights (masked to the
 * legal tokens), [B, T], with no gradient. The caller disposes it.
 */
export function proximalLogProbs<B extends PpoBatch>(policy: PpoPolicy<B>, batch: B): tf.Tensor2D {
  const { batch: B, length: T } = batch;
  const V = policy.numActions;
  return tf.tidy(() => {
    const input = policy.input(batch); // [B, T] tokens or [N, I] observations
    const actions = tf.tensor2d(batch.actions, [B, T], 'int32'); // [B, T]
    const mask = legalFor(batch, V);
    const legal = mask ? tf.tensor3d(mask, [B, T, V], 'int32').toFloat() : undefined; // [B, T, V]
    const { logits } = policy.forward(input); // [B, T, V]
    return actionLogProbs(logits, actions, legal).logp as tf.Tensor2D; // [B, T]
  });
}

// ---- 3. epochs ---------------------------------------------------------------------------

/** How one update runs. */
export interface UpdateOptions {
  /** Optimiser steps on the batch (PPO epochs); at least one is taken. */
  updates: number;
  /** The scheduled learning rate of this update (Adam keeps its moments); omitted keeps the rate. */
  rate?: number;
  /** Called after each step with its metrics, its epoch and the clock's time when it began. */
  onStep?: (metrics: StepMetrics, epoch: number, startedAt: number) => void;
  /** The clock of `onStep`'s times (ms). */
  clock?: () => number;
  /** The version the update makes from (an update strategy's schedule). */
  version?: number;
  /** The batch's performance in [0, 1] (an update strategy's trend). */
  performance?: number;
}

/**
 * One PPO update: π_prox once, then `updates` optimiser steps on `batch`. Returns the last step's
 * metrics. A step whose loss or gradient is not finite throws and leaves the policy as it was.
 */
export async function ppoUpdate<B extends PpoBatch>(
  policy: PpoPolicy<B>,
  batch: B,
  opts: UpdateOptions,
): Promise<StepMetrics> {
  const clock = opts.clock ?? (() => performance.now());
  const { version, performance: perf, rate: scheduled } = opts;
  const rate = policy.beginUpdate
    ? await policy.beginUpdate({ version, performance: perf, rate: scheduled })
    : scheduled;
  if (rate !== undefined) policy.optimizer.rate = rate;
  const prox = proximalApart(policy.config.loss, batch, opts.updates)
    ? proximalLogProbs(policy, batch)
    : undefined;
  let metrics: StepMetrics | undefined;
  try {
    for (let epoch = 0; epoch < Math.max(1, opts.updates); epoch++) {
      const startedAt = clock();
      metrics = await optimiserStep(policy, batch, prox);
      opts.onStep?.(metrics, epoch, startedAt);
    }
  } finally {
    prox?.dispose();
  }
  if (!metrics) throw new Error('no step taken');
  return metrics;
}

// ---- 4. the loss -------------------------------------------------------------------------

/** A batch as tensors (owned by the step). */
export interface StepInputs {
  /** The policy's input: tokens [B, T], or observations [N, I]. */
  input: tf.Tensor2D;
  actions: tf.Tensor2D; // [B, T]
  mask: tf.Tensor2D; // [B, T]
  advantages: tf.Tensor2D; // [B, T]
  returns: tf.Tensor2D; // [B, T]
  /** Prioritized replay's importance weights. */
  weights?: tf.Tensor2D; // [B, T]
  /** log π_behav (zeros for a batch without it). */
  behav: tf.Tensor2D; // [B, T]
  legal?: tf.Tensor3D; // [B, T, V]
  /** Where π_behav is NaN (relabelled tokens), when any is. */
  nanBehav?: tf.Tensor2D; // [B, T]
}

/** The loss of a step and its parts (0-d tensors). */
export interface LossParts {
  loss: tf.Scalar;
  parts: Record<string, tf.Scalar>;
}

/**
 * L = L_policy + c_v·L_value − c_e·H over the policy's tokens. L_policy is −A·log π (`pg`),
 * standard PPO's clip against π_behav (`ppo`), or decoupled PPO (`decoupled`): clip against
 * π_prox, weighted by w = π_prox / π_behav, capped. π_prox is `prox` when given, else the
 * current log-probs as a constant (the same values a separate pass would compute). Called inside
 * the step's gradient closure (a tidy): its intermediate tensors are freed there.
 */
export function ppoLoss(
  { logits, values }: PolicyOutput,
  x: StepInputs,
  kind: StepMetrics['lossKind'],
  prox: tf.Tensor2D | undefined,
  config: Pick<TrainerConfig, 'clipEps' | 'wCap' | 'valueCoef' | 'entropyCoef'> &
    Partial<Pick<TrainerConfig, 'entropyFloor'>>,
): LossParts {
  const { clipEps, wCap, valueCoef, entropyCoef, entropyFloor = 0 } = config;
  const { logp, entropy: ent } = actionLogProbs(logits, x.actions, x.legal); // [B, T] each
  const needProx = kind === 'decoupled' || x.nanBehav !== undefined;
  const proxLogp = needProx ? (prox ?? constantOf(logp, x.mask)) : undefined; // [B, T]
  // Relabelled tokens' unknown π_behav: π_prox stands in (w = 1).
  const behav = x.nanBehav && proxLogp ? (tf.where(x.nanBehav, proxLogp, x.behav) as tf.Tensor2D) : x.behav; // [B, T]
  // The loss's diagnostics (KL, clip, w, lag) count only tokens a rollout worker sampled.
  const sampled = x.nanBehav ? (x.mask.mul(x.nanBehav.logicalNot().toFloat()) as tf.Tensor2D) : x.mask; // [B, T]
  const policy =
    kind === 'pg'
      ? { pgLoss: maskedMean(x.advantages.mul(logp).neg(), x.mask) }
      : kind === 'ppo'
        ? ppoClipLoss(logp, behav, x.advantages, x.mask, clipEps, sampled)
        : decoupledPpoLoss(logp, proxLogp ?? behav, behav, x.advantages, x.mask, clipEps, wCap, sampled);
  const squared = values.sub(x.returns).square().mul(0.5); // [B, T]
  // Prioritized replay's importance weights scale the value loss as the advantages scale the policy's.
  const valueLoss = maskedMean(x.weights ? squared.mul(x.weights) : squared, x.mask);
  const entropy = maskedMean(ent, x.mask);
  const parts: Record<string, tf.Scalar> = { ...policy, valueLoss, entropy };
  const bonused = policy.pgLoss.add(valueLoss.mul(valueCoef)).sub(entropy.mul(entropyCoef)) as tf.Scalar;
  // The entropy floor: a hinge at weight 1 that pushes H back up only while it is below the floor.
  const loss =
    entropyFloor > 0 ? (bonused.add(tf.relu(tf.scalar(entropyFloor).sub(entropy))) as tf.Scalar) : bonused;
  return { loss, parts };
}

// ---- 5. the step -------------------------------------------------------------------------

/** Scalars read back after each step, in one stacked readback. */
const METRIC_NAMES = [
  'loss',
  'pgLoss',
  'valueLoss',
  'entropy',
  'gradNorm',
  'approxKl',
  'clipFrac',
  'wMean',
  'wMax',
  'maskedFrac',
  'lagKl',
] as const;

/**
 * One Adam step on `batch`, gradient norm clipped to `maxGradNorm`. The policy loss is
 * `config.loss` when the batch carries behaviour log-probs, else `pg` (imitation batches).
 * A loss or gradient norm that is not finite (NaN, ±∞) throws and applies nothing: the weights,
 * Adam's state and the step count stay as they were (the pipeline then stops the run with the
 * message, and no NaN version is published).
 */
export async function optimiserStep<B extends PpoBatch>(
  policy: PpoPolicy<B>,
  batch: B,
  prox?: tf.Tensor2D,
): Promise<StepMetrics> {
  validateBatch(batch);
  const t0 = performance.now();
  const { batch: B, length: T } = batch;
  const V = policy.numActions;
  const legal = legalFor(batch, V);
  const kind = batch.behavLogp ? policy.config.loss : 'pg';
  const inputs = tf.tidy(() => ({
    input: policy.input(batch), // [B, T] tokens or [N, I] observations
    actions: tf.tensor2d(batch.actions, [B, T], 'int32'), // [B, T]
    mask: tf.tensor2d(batch.mask, [B, T]), // [B, T]
    advantages: tf.tensor2d(batch.advantages, [B, T]), // [B, T]
    returns: tf.tensor2d(batch.returns, [B, T]), // [B, T]
    weights: batch.weights ? tf.tensor2d(batch.weights, [B, T]) : undefined, // [B, T]
    behav: tf.tensor2d(batch.behavLogp ?? new Float32Array(B * T), [B, T]), // [B, T]
    legal: legal ? tf.tensor3d(legal, [B, T, V], 'int32').toFloat() : undefined, // [B, T, V]
  }));
  // Relabelled (hindsight) tokens carry a NaN behaviour log-prob: π_prox stands in (w = 1).
  const relabelled = kind !== 'pg' && (batch.behavLogp?.some(Number.isNaN) ?? false);
  const nanBehav = relabelled ? tf.isNaN(inputs.behav) : undefined; // [B, T]
  const vars = policy.trainable();
  const { parts, update } = tf.tidy(() => {
    let kept: Record<string, tf.Scalar> = {};
    const { value, grads } = tf.variableGrads(() => {
      const out = policy.forward(inputs.input); // [B, T, V], [B, T]
      const { loss, parts } = ppoLoss(out, { ...inputs, nanBehav }, kind, prox, policy.config);
      kept = Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, tf.keep(v)]));
      return loss;
    }, vars);
    const { clipped, norm } = clipByGlobalNorm(grads, policy.config.maxGradNorm); // each like its variable
    const scalars: Record<string, tf.Scalar> = { loss: value, gradNorm: norm, ...kept };
    return { parts: scalars, update: clipped };
  });
  tf.dispose(inputs);
  nanBehav?.dispose();
  // One readback for every scalar (on WebGPU each read is a buffer map, on the critical path),
  // before the update: a step whose loss or gradient is not finite must not reach the weights.
  const names = METRIC_NAMES.filter((n) => parts[n] !== undefined);
  const packed = tf.tidy(() => tf.stack(names.map((n) => parts[n] as tf.Scalar))); // [names]
  tf.dispose(Object.values(parts));
  let values: tf.TypedArray;
  try {
    values = await packed.data();
  } catch (err) {
    tf.dispose(Object.values(update));
    throw err;
  } finally {
    packed.dispose();
  }
  const got = (n: (typeof METRIC_NAMES)[number], fallback: number) => {
    const i = names.indexOf(n);
    return i < 0 ? fallback : (values[i] ?? NaN);
  };
  const loss = got('loss', NaN);
  const gradNorm = got('gradNorm', NaN);
  if (!Number.isFinite(loss) || !Number.isFinite(gradNorm)) {
    // Adam would turn every parameter NaN (and the next version would publish them): the weights,
    // Adam's state and the step count stay as they were, and the caller learns why.
    tf.dispose(Object.values(update));
    const what = Number.isFinite(loss) ? `the gradient norm is ${gradNorm}` : `the loss is ${loss}`;
    throw new Error(`training step ${policy.step + 1}: ${what}: ${STEP_NOT_APPLIED}`);
  }
  policy.observeGradients?.(update);
  policy.optimizer.applyGradients(Object.entries(update).map(([name, tensor]) => ({ name, tensor })));
  tf.dispose(Object.values(update));
  policy.step += 1;
  return {
    step: policy.step,
    lossKind: kind,
    loss,
    pgLoss: got('pgLoss', NaN),
    valueLoss: got('valueLoss', NaN),
    entropy: got('entropy', NaN),
    gradNorm,
    approxKl: got('approxKl', 0),
    clipFrac: got('clipFrac', 0),
    wMean: got('wMean', 1),
    wMax: got('wMax', 1),
    maskedFrac: got('maskedFrac', 0),
    lagKl: got('lagKl', 0),
    learningRate: policy.optimizer.rate,
    tensorsTrained: vars.length,
    ms: performance.now() - t0,
  };
}
