import * as tf from '@tensorflow/tfjs';
import type { TokenBatch } from './batch';
import { optimiserStep, proximalLogProbs, type PpoPolicy } from './update';
import { type ModelArgs } from '../policy/config';
import { initLora, LORA_TRAINED_WHOLE, mergedWeights, mergeLora, type LoraConfig } from '../policy/lora';
import {
  countParams,
  forward,
  initParams,
  type Params,
  type PolicyOutput,
  type Weights,
} from '../policy/model';
import { packParams, packTensors, type Checkpoint } from '../policy/weights';
import type { StepMetrics } from '../policy/metrics';
import { type TrainerConfig } from './learner-config';
import { RateAdam } from './rate-adam';

export type { StepMetrics };
/** The losses' stop-gradient, re-exported for the trainer's callers. */
export { constantOf } from './losses';

export { RateAdam };

/**
 * Owns a policy's parameters and its Adam state, and takes gradient steps on token batches.
 * Tensors live on whatever tfjs backend is active when it is constructed.
 */
export class PolicyTrainer implements PpoPolicy {
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
    this.optimizer = new RateAdam(config.learningRate, this.momentNames());
  }

  /** Adam stores each tensor's moments under its parameter's (or adapter's) name. */
  private momentNames(): Map<string, string> {
    return new Map([...(this.adapters ?? this.params)].map(([name, v]) => [v.name, name]));
  }

  /** A new learning rate, with a fresh Adam state (for a run that starts from these weights). */
  setLearningRate(lr: number): void {
    if (!(lr > 0 && Number.isFinite(lr)))
      throw new Error(`learning rate must be a positive number, got ${lr}`);
    this.optimizer.dispose();
    this.optimizer = new RateAdam(lr, this.momentNames());
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

  /** The tokens the policy chooses among (V). */
  get numActions(): number {
    return this.args.vocabSize;
  }

  /** A batch's tokens as the input of `forward`, [B, T]; the caller disposes it. */
  input(batch: TokenBatch): tf.Tensor2D {
    return tf.tensor2d(batch.tokens, [batch.batch, batch.length], 'int32'); // [B, T]
  }

  /** The variables a step trains: every parameter, or the LoRA adapters. */
  trainable(): tf.Variable[] {
    return [...(this.adapters ?? this.params).values()];
  }

  /** Logits [B, T, V] and values [B, T] under the weights the policy runs with (LoRA merged). */
  forward(tokens: tf.Tensor2D): PolicyOutput {
    return forward(this.weights(), this.args, tokens);
  }

  /**
   * π_prox of DESIGN §5: log-probabilities of the batch's actions under the current weights
   * (masked to the legal tokens), [B, T], with no gradient. Computed once before the update on a
   * batch and held fixed across its PPO epochs; the caller disposes it.
   */
  proximalLogProbs(batch: TokenBatch): tf.Tensor2D {
    return proximalLogProbs(this, batch);
  }

  /**
   * One Adam step on `batch` (`rl/update.ts`'s `optimiserStep`). For `decoupled`, π_prox is
   * `prox` when given (the policy before this batch's first step, see `proximalLogProbs`), else
   * the current weights' log-probs from this step's own forward pass, as a constant. A loss or
   * gradient norm that is not finite throws and applies nothing.
   */
  trainStep(batch: TokenBatch, prox?: tf.Tensor2D): Promise<StepMetrics> {
    return optimiserStep(this, batch, prox);
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
