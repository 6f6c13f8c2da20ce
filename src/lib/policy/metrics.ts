/**
 * A training step's metrics, and what a stored version keeps of them. Free of tfjs: the page's
 * main thread reads them without loading it.
 */

/** Metrics of one update (DESIGN §9). */
export interface StepMetrics {
  /** Optimiser steps taken so far, this one included. */
  step: number;
  /** The policy loss used for this batch. */
  lossKind: 'pg' | 'ppo' | 'decoupled';
  loss: number;
  pgLoss: number;
  valueLoss: number;
  entropy: number;
  /** Global gradient norm before clipping. */
  gradNorm: number;
  /** k3 estimate of the KL between the policy before and after (PPO losses; 0 for pg). */
  approxKl: number;
  /** Fraction of policy tokens whose ratio was clipped. */
  clipFrac: number;
  /** Mean and max of w = π_prox/π_behav over policy tokens (1 unless decoupled). */
  wMean: number;
  wMax: number;
  /** Fraction of policy tokens masked because w exceeded the cap. */
  maskedFrac: number;
  /** k3 estimate of KL(π_behav ‖ π_prox), mean of w − 1 − log w: how far the samples lag (0 unless decoupled). */
  lagKl: number;
  learningRate: number;
  /** Tensors the step trained (an update strategy may leave some out); absent in older records. */
  tensorsTrained?: number;
  /** Wall milliseconds of the step, from upload to the loss read back. */
  ms: number;
}

/** How a step refused for a loss or gradient that is not finite says so (the doctor reads it). */
export const STEP_NOT_APPLIED = 'the step was not applied';

/** The numbers of a step's metrics, as a stored version keeps them. */
export function metricNumbers(m: StepMetrics): Record<string, number> {
  return Object.fromEntries(Object.entries(m).filter((e): e is [string, number] => typeof e[1] === 'number'));
}

/** A step's metrics from what a stored version kept of them (`metricNumbers`); a missing one is NaN. */
export function storedStepMetrics(
  m: Readonly<Record<string, number>>,
  lossKind: StepMetrics['lossKind'],
): StepMetrics {
  const n = (k: keyof StepMetrics) => m[k] ?? NaN;
  return {
    step: n('step'),
    lossKind,
    loss: n('loss'),
    pgLoss: n('pgLoss'),
    valueLoss: n('valueLoss'),
    entropy: n('entropy'),
    gradNorm: n('gradNorm'),
    approxKl: n('approxKl'),
    clipFrac: n('clipFrac'),
    wMean: n('wMean'),
    wMax: n('wMax'),
    maskedFrac: n('maskedFrac'),
    lagKl: n('lagKl'),
    learningRate: n('learningRate'),
    ms: n('ms'),
  };
}
