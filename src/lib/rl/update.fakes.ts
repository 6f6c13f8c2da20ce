import * as tf from '@tensorflow/tfjs';
import { expect } from 'vitest';
import type { StepMetrics } from '../policy/metrics';
import type { PolicyOutput } from '../policy/model';
import { packOptimizer } from '../policy/weights';

/** A policy as the guard's test looks at it: what a step changes, and its forward pass. */
export interface Guarded {
  optimizer: tf.Optimizer;
  step: number;
  trainable(): tf.Variable[];
  forward(input: tf.Tensor2D): PolicyOutput;
  dispose(): void;
}

/** Every trained variable's values, Adam's state as stored, and the step count. */
async function stateOf(policy: Guarded): Promise<{ weights: number[][]; adam: number[]; step: number }> {
  return {
    weights: policy.trainable().map((v) => Array.from(v.dataSync())),
    adam: Array.from(new Float32Array((await packOptimizer(policy.optimizer)).data)),
    step: policy.step,
  };
}

/** From now on `policy`'s logits pass back a NaN gradient: the loss stays finite, its gradient does not. */
function poisonGradient(policy: Guarded): void {
  const forward = policy.forward.bind(policy);
  policy.forward = (input) => {
    const { logits, values } = forward(input); // [B, T, V], [B, T]
    const nanGrad = tf.customGrad(() => ({
      value: logits.clone(),
      gradFunc: (dy: tf.Tensor) => dy.mul(NaN),
    }));
    return { logits: nanGrad(logits) as tf.Tensor3D, values }; // [B, T, V], [B, T]
  };
}

/**
 * Takes two good steps of `update` (Adam's moments exist), poisons `policy`'s gradient, and checks
 * that the third step is refused, reported, leaks nothing and leaves weights, Adam and the count.
 */
export async function expectNanStepSkipped(
  policy: Guarded,
  update: () => Promise<StepMetrics>,
): Promise<void> {
  const good = await update();
  expect(good.step).toBe(2);
  const before = await stateOf(policy);
  const tensors = tf.memory().numTensors;
  poisonGradient(policy);
  await expect(update()).rejects.toThrow(
    'training step 3: the gradient norm is NaN: the step was not applied',
  );
  expect(tf.memory().numTensors).toBe(tensors);
  expect(await stateOf(policy)).toEqual(before);
  policy.dispose();
}
