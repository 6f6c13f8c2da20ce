import * as tf from '@tensorflow/tfjs';
import type { TokenBatch } from '../rl/batch';
import { validateBatch } from '../rl/batch';
import { actionLogProbs, clipByGlobalNorm, maskedMean } from '../rl/losses';
import { decoupledPpoLoss, ppoClipLoss } from '../rl/ppo';
import type { ModelArgs, TrainerConfig } from './config';
import { initLora, LORA_TRAINED_WHOLE, mergedWeights, mergeLora, type LoraConfig } from './lora';
import { countParams, forward, initParams, type Params, type Weights } from './model';
import { packParams, packTensors, type Checkpoint } from './weights';
import type { StepMetrics } from './metrics';

/**
 * `x`'s value as a constant: no gradient flows back into whatever computed it (tfjs has no
 * stop-gradient op). The ops of a custom gradient's forward function are not recorded on the
 * tape, and the one node it records takes `anchor` (a constant input) rather than `x`, so `x`'s
 * ancestors are not on its path.
 */
export function constantOf<T extends tf.Tensor>(x: T, anchor: tf.Tensor): T {
  const f = tf.customGrad(() => ({ value: x.clone(), gradFunc: () => tf.zerosLike(anchor) }));
  return f(anchor) as T;
}

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

export type { StepMetrics };

/** Adam (β 0.9 / 0.999, as `tf.train.adam`) whose rate a schedule can change, keeping its moments. */
export class RateAdam extends tf.AdamOptimizer {
  constructor(learningRate: number) {
    super(learningRate, 0.9, 0.999);
  }

  get rate(): number {
    return this.learningRate;
  }

  set rate(lr: number) {
    if (!(lr > 0 && Number.isFinite(lr)))
      throw new Error(`learning rate must be a positive number, got ${lr}`);
    this.learningRate = lr;
  }
}

/**
 * Owns a policy's parameters and its Adam state, and takes gradient steps on token batches.
 * Tensors live on whatever tfjs backend is active when it is constructed.
 */
export class PolicyTrainer {
  readonly params: Params;
  /** LoRA adapters when the trainer trains them on a frozen base (DESIGN §4), else null. */
  readonly adapters: Params | null;
  optimizer: RateAdam;
  /**
   * The run's learning rate (starts at `config.learningRate`); a schedule sets the rate of each
   * step on `optimizer.rate`.
   */
  learningRate: number;
  step = 0;

  constructor(
    readonly args: ModelArgs,
    public config: TrainerConfig,
    params?: Params,
    /** Train rank-r adapters on the attention and MLP matrices of a frozen base. */
    readonly lora?: LoraConfig,
  ) {
    this.params = params ?? initParams(args, config.seed);
    this.adapters = lora ? initLora(this.params, args, lora, config.seed + 1000) : null;
    this.learningRate = config.learningRate;
    this.optimizer = new RateAdam(config.learningRate);
  }

  /** A new learning rate, with a fresh Adam state (for a run that starts from these weights). */
  setLearningRate(lr: number): void {
    if (!(lr > 0 && Number.isFinite(lr)))
      throw new Error(`learning rate must be a positive number, got ${lr}`);
    this.optimizer.dispose();
    this.optimizer = new RateAdam(lr);
    this.learningRate = lr;
  }

  /**
   * Sets the LoRA adapters to stored values (a resumed LoRA run: the base came in the
   * constructor). Every adapter must be given, with its shape; the caller keeps `stored`. A
   * version stored before the value head trained beside the adapters lacks it: the head then
   * starts from the base's, as it was, with Adam moments of zero (Adam's bias correction goes by
   * the run's step count, so the head's first steps are several times the rate; it settles).
   */
  loadAdapters(stored: Weights): void {
    const adapters = this.adapters;
    if (!adapters) throw new Error('this trainer trains every parameter: it has no LoRA adapters to load');
    let missing = 0;
    for (const [name, v] of adapters) {
      const t = stored.get(name);
      if (!t && LORA_TRAINED_WHOLE.includes(name)) {
        missing += 1;
        continue;
      }
      if (!t) throw new Error(`the stored LoRA version lacks adapter ${name}`);
      if (t.shape.join() !== v.shape.join())
        throw new Error(
          `adapter ${name} is [${t.shape.join(', ')}] in the store, [${v.shape.join(', ')}] here`,
        );
    }
    if (stored.size !== adapters.size - missing)
      throw new Error(`the stored LoRA version holds ${stored.size} adapters, this trainer ${adapters.size}`);
    for (const [name, v] of adapters) {
      const t = stored.get(name);
      if (t) v.assign(t);
    }
  }

  get parameterCount(): number {
    return countParams(this.params);
  }

  /** The weights the policy runs with (inside a tidy or gradient closure). */
  private weights(): Weights {
    return this.adapters && this.lora ? mergeLora(this.params, this.adapters, this.lora) : this.params;
  }

  /**
   * The policy to publish: every parameter, or with LoRA only the adapters (`full` forces every
   * parameter, e.g. the base of version 0).
   */
  async exportPolicy(full = false): Promise<Checkpoint> {
    const ckpt: Checkpoint = {
      format: 'sandbox-rl-lab/weights@1',
      model: this.args,
      params: await packParams(this.params),
      step: this.step,
    };
    if (!this.adapters || !this.lora || full) return ckpt;
    return { ...ckpt, params: await packParams(this.adapters), lora: this.lora };
  }

  /** Every parameter of the policy as it runs: with LoRA, the base merged with the adapters. */
  async exportMerged(): Promise<Checkpoint> {
    if (!this.adapters || !this.lora) return this.exportPolicy(true);
    const merged = mergedWeights(this.params, this.adapters, this.lora);
    try {
      return {
        format: 'sandbox-rl-lab/weights@1',
        model: this.args,
        params: await packTensors([...merged].map(([name, tensor]) => ({ name, tensor }))),
        step: this.step,
      };
    } finally {
      tf.dispose([...merged.values()]);
    }
  }

  /**
   * π_prox of DESIGN §5: log-probabilities of the batch's actions under the current weights
   * (masked to the legal tokens), [B, T], with no gradient. Computed once before the update on a
   * batch and held fixed across its PPO epochs; the caller disposes it.
   */
  proximalLogProbs(batch: TokenBatch): tf.Tensor2D {
    const { batch: B, length: T } = batch;
    const V = this.args.vocabSize;
    return tf.tidy(() => {
      const tokens = tf.tensor2d(batch.tokens, [B, T], 'int32'); // [B, T]
      const actions = tf.tensor2d(batch.actions, [B, T], 'int32'); // [B, T]
      const legal = batch.legal ? tf.tensor3d(batch.legal, [B, T, V], 'int32').toFloat() : undefined; // [B, T, V]
      const { logits } = forward(this.weights(), this.args, tokens); // [B, T, V]
      return actionLogProbs(logits, actions, legal).logp as tf.Tensor2D; // [B, T]
    });
  }

  /**
   * One Adam step on `batch`, gradient norm clipped to `maxGradNorm`. The policy loss is
   * `config.loss` when the batch carries behaviour log-probs, else `pg` (imitation batches).
   * For `decoupled`, π_prox is `prox` when given (the policy before this batch's first step,
   * see `proximalLogProbs`), else the current weights' log-probs from this step's own forward
   * pass, as a constant: the same values a separate pass would compute, for one pass less.
   * A loss or gradient norm that is not finite (NaN, ±∞) throws and applies nothing: the weights,
   * Adam's state and the step count stay as they were (the pipeline then stops the run with the
   * message, and no NaN version is published).
   */
  async trainStep(batch: TokenBatch, prox?: tf.Tensor2D): Promise<StepMetrics> {
    validateBatch(batch);
    const t0 = performance.now();
    const { batch: B, length: T } = batch;
    const V = this.args.vocabSize;
    const kind = batch.behavLogp ? this.config.loss : 'pg';
    const inputs = tf.tidy(() => ({
      tokens: tf.tensor2d(batch.tokens, [B, T], 'int32'), // [B, T]
      actions: tf.tensor2d(batch.actions, [B, T], 'int32'), // [B, T]
      mask: tf.tensor2d(batch.mask, [B, T]), // [B, T]
      advantages: tf.tensor2d(batch.advantages, [B, T]), // [B, T]
      returns: tf.tensor2d(batch.returns, [B, T]), // [B, T]
      weights: batch.weights ? tf.tensor2d(batch.weights, [B, T]) : undefined, // [B, T]
      behav: tf.tensor2d(batch.behavLogp ?? new Float32Array(B * T), [B, T]), // [B, T]
      legal: batch.legal ? tf.tensor3d(batch.legal, [B, T, V], 'int32').toFloat() : undefined, // [B, T, V]
    }));
    // Relabelled (hindsight) tokens carry a NaN behaviour log-prob: π_prox stands in (w = 1).
    const relabelled = kind !== 'pg' && (batch.behavLogp?.some(Number.isNaN) ?? false);
    const needProx = kind === 'decoupled' || relabelled;
    const nanBehav = relabelled ? tf.isNaN(inputs.behav) : undefined; // [B, T]
    const vars = [...(this.adapters ?? this.params).values()];
    const { clipEps, wCap, valueCoef, entropyCoef } = this.config;
    const { parts, update } = tf.tidy(() => {
      let kept: Record<string, tf.Scalar> = {};
      const { value, grads } = tf.variableGrads(() => {
        const { logits, values } = forward(this.weights(), this.args, inputs.tokens); // [B, T, V], [B, T]
        const { logp, entropy: ent } = actionLogProbs(logits, inputs.actions, inputs.legal); // [B, T] each
        const proxLogp = needProx ? (prox ?? constantOf(logp, inputs.mask)) : undefined; // [B, T]
        // Relabelled tokens' unknown π_behav: π_prox stands in (w = 1).
        const behav =
          nanBehav && proxLogp ? (tf.where(nanBehav, proxLogp, inputs.behav) as tf.Tensor2D) : inputs.behav; // [B, T]
        // The loss's diagnostics (KL, clip, w, lag) count only tokens a rollout worker sampled.
        const sampled = nanBehav
          ? (inputs.mask.mul(nanBehav.logicalNot().toFloat()) as tf.Tensor2D)
          : inputs.mask; // [B, T]
        const policy =
          kind === 'pg'
            ? { pgLoss: maskedMean(inputs.advantages.mul(logp).neg(), inputs.mask) }
            : kind === 'ppo'
              ? ppoClipLoss(logp, behav, inputs.advantages, inputs.mask, clipEps, sampled)
              : decoupledPpoLoss(
                  logp,
                  proxLogp ?? behav,
                  behav,
                  inputs.advantages,
                  inputs.mask,
                  clipEps,
                  wCap,
                  sampled,
                );
        const squared = values.sub(inputs.returns).square().mul(0.5); // [B, T]
        // Prioritized replay's importance weights scale the value loss as the advantages scale the policy's.
        const valueLoss = maskedMean(inputs.weights ? squared.mul(inputs.weights) : squared, inputs.mask);
        const entropy = maskedMean(ent, inputs.mask);
        kept = Object.fromEntries(
          Object.entries({ ...policy, valueLoss, entropy }).map(([k, v]) => [k, tf.keep(v)]),
        );
        return policy.pgLoss.add(valueLoss.mul(valueCoef)).sub(entropy.mul(entropyCoef)) as tf.Scalar;
      }, vars);
      const { clipped, norm } = clipByGlobalNorm(grads, this.config.maxGradNorm); // each like its variable
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
      throw new Error(`training step ${this.step + 1}: ${what}: the step was not applied`);
    }
    this.optimizer.applyGradients(Object.entries(update).map(([name, tensor]) => ({ name, tensor })));
    tf.dispose(Object.values(update));
    this.step += 1;
    return {
      step: this.step,
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
      learningRate: this.optimizer.rate,
      ms: performance.now() - t0,
    };
  }

  /** Per-parameter sums of |w|: a cheap fingerprint that shows whether the weights moved. */
  async fingerprint(): Promise<number[]> {
    const sums = tf.tidy(() => tf.stack([...this.params.values()].map((v) => v.abs().sum())));
    const out = Array.from(await sums.data());
    sums.dispose();
    return out;
  }

  dispose(): void {
    tf.dispose([...this.params.values(), ...(this.adapters?.values() ?? [])]);
    this.optimizer.dispose();
  }
}
