import * as tf from '@tensorflow/tfjs';
import type { TokenBatch } from '../rl/batch';
import { validateBatch } from '../rl/batch';
import { clipByGlobalNorm, policyGradientLoss } from '../rl/losses';
import type { ModelArgs, TrainerConfig } from './config';
import { countParams, forward, initParams, type Params } from './model';

/** What one optimisation step reports (DESIGN §9 metrics; issue 5 adds the PPO ones). */
export interface StepMetrics {
  /** Optimiser steps taken so far, this one included. */
  step: number;
  loss: number;
  pgLoss: number;
  valueLoss: number;
  entropy: number;
  /** Global gradient norm before clipping. */
  gradNorm: number;
  /** Wall milliseconds of the step, from upload to the loss read back. */
  ms: number;
}

/**
 * Owns a policy's parameters and its Adam state, and takes gradient steps on token batches.
 * Tensors live on whatever tfjs backend is active when it is constructed.
 */
export class PolicyTrainer {
  readonly params: Params;
  readonly optimizer: tf.AdamOptimizer;
  step = 0;

  constructor(
    readonly args: ModelArgs,
    readonly config: TrainerConfig,
    params?: Params,
  ) {
    this.params = params ?? initParams(args, config.seed);
    this.optimizer = tf.train.adam(config.learningRate);
  }

  get parameterCount(): number {
    return countParams(this.params);
  }

  /** One Adam step on `batch`, gradient norm clipped to `maxGradNorm`. */
  async trainStep(batch: TokenBatch): Promise<StepMetrics> {
    validateBatch(batch);
    const t0 = performance.now();
    const { batch: B, length: T } = batch;
    const inputs = tf.tidy(() => ({
      tokens: tf.tensor2d(batch.tokens, [B, T], 'int32'), // [B, T]
      actions: tf.tensor2d(batch.actions, [B, T], 'int32'), // [B, T]
      mask: tf.tensor2d(batch.mask, [B, T]), // [B, T]
      advantages: tf.tensor2d(batch.advantages, [B, T]), // [B, T]
      returns: tf.tensor2d(batch.returns, [B, T]), // [B, T]
    }));
    const vars = [...this.params.values()];
    const parts = tf.tidy(() => {
      let kept: { pgLoss: tf.Scalar; valueLoss: tf.Scalar; entropy: tf.Scalar } | undefined;
      const { value, grads } = tf.variableGrads(() => {
        const { logits, values } = forward(this.params, this.args, inputs.tokens);
        const l = policyGradientLoss(
          logits,
          values,
          inputs.actions,
          inputs.advantages,
          inputs.returns,
          inputs.mask,
          this.config,
        );
        kept = { pgLoss: tf.keep(l.pgLoss), valueLoss: tf.keep(l.valueLoss), entropy: tf.keep(l.entropy) };
        return l.loss;
      }, vars);
      const { clipped, norm } = clipByGlobalNorm(grads, this.config.maxGradNorm);
      this.optimizer.applyGradients(Object.entries(clipped).map(([name, tensor]) => ({ name, tensor })));
      if (!kept) throw new Error('loss closure did not run');
      return { loss: value, gradNorm: norm, ...kept };
    });
    tf.dispose(inputs);
    // One readback for all five scalars: on WebGPU each read is a buffer map, so it is on the
    // critical path of every step.
    const packed = tf.tidy(() =>
      tf.stack([parts.loss, parts.pgLoss, parts.valueLoss, parts.entropy, parts.gradNorm]),
    ); // [5]
    tf.dispose(parts);
    const [loss = NaN, pgLoss = NaN, valueLoss = NaN, entropy = NaN, gradNorm = NaN] = await packed.data();
    packed.dispose();
    this.step += 1;
    return {
      step: this.step,
      loss,
      pgLoss,
      valueLoss,
      entropy,
      gradNorm,
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
    tf.dispose([...this.params.values()]);
    this.optimizer.dispose();
  }
}
