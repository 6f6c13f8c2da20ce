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
import { GradientImportance, importanceRecord, seedImportance, type Importance } from './importance';
import { StrategyRunner, type StrategyReport } from './strategy';
import type { UpdateContext } from './update';

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
  /** The update strategy over the run (`strategy.ts`): its performance window, rate, switches. */
  readonly strategy: StrategyRunner;
  /** Updates begun (`beginUpdate`): the version of the next when its caller names none. */
  private updates = 0;
  /** The tensors (by name) the next steps train; null: every one of `adapters ?? params`. */
  private trainSet: Set<string> | null = null;
  /** The seed's importance as last measured (`selective` by `seed` reads it). */
  private importance: Importance | null = null;
  private readonly gradientImportance = new GradientImportance();
  private report: StrategyReport | null = null;

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
    if (lora && config.strategy !== 'full' && config.strategy !== 'lora')
      throw new Error(
        `update strategy ${config.strategy} chooses among every parameter: with LoRA the strategy is lora`,
      );
    if (!lora && config.strategy === 'lora')
      throw new Error('update strategy lora trains LoRA adapters: this trainer has none (set policy.lora)');
    this.strategy = new StrategyRunner(config);
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

  /**
   * The variables a step trains: every parameter, or the LoRA adapters, less those the update
   * strategy leaves out (they get no gradient, no step and no Adam moments).
   */
  trainable(): tf.Variable[] {
    const all = [...(this.adapters ?? this.params)];
    const set = this.trainSet;
    return (set ? all.filter(([name]) => set.has(name)) : all).map(([, v]) => v);
  }

  /**
   * Before an update (`ppoUpdate`): the strategy records the batch's performance, may switch
   * (`auto`), sets the rate (`adaptive`) and the tensors that train; the importance is measured
   * when due (every `importanceEvery` versions) or when `selective` has none yet (by `gradient`:
   * once the steps before have been observed). Returns the update's rate (undefined: the
   * optimiser's as it is).
   */
  async beginUpdate(u: UpdateContext): Promise<number | undefined> {
    const cfg = this.config;
    const version = u.version ?? this.updates;
    this.updates = version + 1;
    const plan = this.strategy.plan(version, u.performance, u.rate ?? this.optimizer.rate);
    const due = cfg.importanceEvery > 0 && version % cfg.importanceEvery === 0;
    const selective = plan.strategy === 'selective';
    const byGradient = cfg.selectiveBy === 'gradient';
    let measured: StrategyReport['importance'];
    if (due || (selective && !byGradient && this.importance === null))
      this.importance = await this.seedImportance();
    const firstGradient = selective && byGradient && !this.gradientImportance.measured;
    if (due || (firstGradient && this.gradientImportance.size > 0)) {
      const gradient = await this.gradientImportance.read();
      if (due && this.importance)
        measured = { seed: importanceRecord(this.importance), gradient: importanceRecord(gradient) };
    }
    const ranking = byGradient ? this.gradientImportance.latest() : this.importance;
    const names = [...(this.adapters ?? this.params).keys()];
    this.trainSet = this.strategy.trainable(plan.strategy, names, this.args.nLayers, version, ranking);
    if (this.trainSet?.size === 0)
      throw new Error(`update strategy ${plan.strategy} leaves no tensor to train at version ${version}`);
    // A tensor left out keeps no optimiser state (if it trains again, its Adam starts afresh).
    const kept = this.trainSet;
    if (kept)
      this.optimizer.keepOnly(
        new Set([...(this.adapters ?? this.params)].filter(([n]) => kept.has(n)).map(([, v]) => v.name)),
      );
    this.report = {
      version,
      strategy: plan.strategy,
      rate: plan.rate,
      tensorsTrained: this.trainSet?.size ?? names.length,
      tensors: names.length,
      performance: plan.stats,
      ...(plan.switched ? { switched: plan.switched } : {}),
      ...(measured ? { importance: measured } : {}),
    };
    return u.rate !== undefined || plan.strategy === 'adaptive' ? plan.rate : undefined;
  }

  /** A step's gradients, before Adam applies them: the gradient-based importance's running mean. */
  observeGradients(grads: Readonly<Record<string, tf.Tensor>>): void {
    const cfg = this.config;
    const wanted =
      cfg.importanceEvery > 0 || (cfg.selectiveBy === 'gradient' && !this.gradientImportance.measured);
    if (!wanted) return;
    const byVariable = new Map([...(this.adapters ?? this.params)].map(([name, v]) => [v.name, name]));
    const g = new Map<string, tf.Tensor>();
    const w = new Map<string, tf.Tensor>();
    for (const [variable, grad] of Object.entries(grads)) {
      const name = byVariable.get(variable);
      const value = name ? (this.adapters ?? this.params).get(name) : undefined;
      if (!name || !value) continue;
      g.set(name, grad);
      w.set(name, value);
    }
    this.gradientImportance.observe(g, w);
  }

  /** What the strategy did at the last update begun: its rate, tensors, statistics, switch, importance. */
  strategyReport(): StrategyReport | null {
    return this.report;
  }

  /** The seed's importance of the policy's tensors as it runs (with LoRA, the merged weights). */
  private async seedImportance(): Promise<Importance> {
    if (!this.adapters || !this.lora) return seedImportance(this.params);
    const merged = mergedWeights(this.params, this.adapters, this.lora);
    try {
      return await seedImportance(merged);
    } finally {
      tf.dispose([...merged.values()]);
    }
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
    this.gradientImportance.dispose();
  }
}
