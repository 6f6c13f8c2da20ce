/// <reference lib="webworker" />
import * as tf from '@tensorflow/tfjs';
import { errorMessage } from '../../src/lib/errors';
import {
  BACKEND_ORDER,
  selectBackend,
  type BackendName,
  type BackendReport,
} from '../../src/lib/policy/backend';
import {
  MEASURE_PLAN,
  backendChoice,
  capFor,
  passedOverReason,
  skippedTiming,
  timeSteps,
  timingOf,
  warmupAtLeast,
  type BackendChoice,
  type BackendTiming,
  type MeasurePlan,
} from '../../src/lib/policy/backend-choice';
import { type ModelArgs } from '../../src/lib/policy/config';
import type { LoraConfig } from '../../src/lib/policy/lora';
import { now, type TimelineEvent } from '../../src/lib/pipeline/events';
import { PolicyTrainer } from '../../src/lib/rl/trainer';
import { imitationBatch } from '../../src/lib/rl/synthetic';
import { abortBackend, initBackend, releaseBackend, startBackend, useBackend } from '../tfjs-backends';
import { type TrainerConfig } from '../../src/lib/rl/learner-config';

/** The policy the trainer will train: the measurement times its training step. */
export interface MeasuredPolicy {
  model: ModelArgs;
  config: TrainerConfig;
  lora?: LoraConfig;
}

/**
 * ms to compile one kernel on the active backend: three ops on tensors of the step's shapes, new
 * to this backend, each run twice (the first run compiles it); the median of first minus second.
 */
async function kernelCompileMs(model: ModelArgs, batchSize: number): Promise<number> {
  const x = tf.fill([batchSize * model.contextLength, model.dModel], 0.5); // [B·T, d]
  const ops: (() => tf.Tensor)[] = [
    () => tf.softmax(x), // [B·T, d]
    () => tf.exp(x), // [B·T, d]
    () => tf.transpose(x), // [d, B·T]
  ];
  const runMs = async (op: () => tf.Tensor) => {
    const t0 = performance.now();
    const y = op();
    await y.data();
    y.dispose();
    return performance.now() - t0;
  };
  const compile: number[] = [];
  try {
    for (const op of ops) {
      const first = await runMs(op);
      compile.push(Math.max(0, first - (await runMs(op))));
    }
  } finally {
    x.dispose();
  }
  return compile.sort((a, b) => a - b)[1] ?? 0;
}

/**
 * Times a warm-up and a few training steps of a throwaway copy of the policy (same model, same
 * batch shape) on the active backend; the copy and every tensor of its steps are disposed. With
 * `kernels` (distinct kernels of a step, profiled on a backend measured before) a backend that
 * compiles too slowly to warm up within the cap is passed over without compiling the step; with
 * `profile` the warm-up is profiled to count them.
 */
async function measureActive(
  backend: BackendName,
  policy: MeasuredPolicy,
  capMs: number,
  plan: MeasurePlan,
  kernels: number | null,
): Promise<{ timing: BackendTiming; kernels: number | null }> {
  const { model, config, lora } = policy;
  let compileMs: number | null = null;
  if (backend === 'webgpu' && kernels !== null) {
    compileMs = await kernelCompileMs(model, config.batchSize);
    const atLeast = warmupAtLeast(compileMs, kernels);
    if (atLeast > capMs) return { timing: skippedTiming(backend, capMs, compileMs, atLeast), kernels };
  }
  const trainer = new PolicyTrainer(model, config, undefined, lora);
  let seed = config.seed;
  let counted = kernels;
  const step = async () => {
    const batch = imitationBatch(config.batchSize, model.contextLength, seed++);
    if (counted !== null) return trainer.trainStep(batch);
    const profile = await tf.profile(async () => {
      await trainer.trainStep(batch);
    });
    counted = profile.kernelNames.length;
  };
  try {
    const times = await timeSteps(step, {
      capMs,
      timedSteps: plan.timedSteps,
      abort: () => abortBackend(backend),
      abortGraceMs: plan.abortGraceMs,
    });
    return { timing: timingOf(backend, times, capMs, compileMs), kernels: counted };
  } finally {
    trainer.dispose();
  }
}

/**
 * Starts each backend of the plan in turn, times the policy's training step on it, and leaves
 * the fastest active, releasing the others. When none of them can train, falls back to the
 * remaining backends in preference order (unmeasured). Emits one timeline event per backend
 * measured.
 */
export async function chooseByMeasurement(
  policy: MeasuredPolicy,
  emit: (event: TimelineEvent) => void,
  plan: MeasurePlan = MEASURE_PLAN,
): Promise<BackendReport & { choice: BackendChoice | null }> {
  const t0 = performance.now();
  const fallbacks: BackendReport['fallbacks'] = [];
  const timings: BackendTiming[] = [];
  let adapter: string | null = null;
  let softwareAdapter = false;
  let kernels: number | null = null;
  for (const [i, backend] of plan.order.entries()) {
    const b0 = now();
    try {
      const started = await startBackend(backend);
      adapter ??= started.adapter;
      softwareAdapter ||= started.software;
    } catch (err) {
      fallbacks.push({ backend, reason: errorMessage(err) });
      continue;
    }
    const capMs = capFor(plan, performance.now() - t0, plan.order.length - i);
    const measured = await measureActive(backend, policy, capMs, plan, kernels);
    const timing = measured.timing;
    kernels = measured.kernels;
    timings.push(timing);
    emit({
      lane: 'trainer',
      kind: 'init',
      t0: b0,
      t1: now(),
      version: -1,
      meta: {
        measured: backend,
        msPerStep: timing.msPerStep === null ? 'none' : Math.round(timing.msPerStep * 10) / 10,
        ...(timing.warmupMs === null ? {} : { warmupMs: Math.round(timing.warmupMs) }),
        ...(timing.cutAfterMs === null ? {} : { cutAfterMs: Math.round(timing.cutAfterMs) }),
        ...(timing.kernelCompileMs === null ? {} : { kernelCompileMs: Math.round(timing.kernelCompileMs) }),
        ...(timing.warmupAtLeastMs === null ? {} : { warmupAtLeastMs: Math.round(timing.warmupAtLeastMs) }),
        ...(timing.error === null ? {} : { error: timing.error }),
      },
    });
  }
  const choice = backendChoice(timings, performance.now() - t0);
  for (const t of timings) {
    if (t.backend === choice?.backend) continue;
    let reason = choice
      ? passedOverReason(t, choice)
      : `it could not train: ${t.error ?? 'no step finished'}`;
    // The adapter's name is a note beside the measurement, never the reason.
    if (t.backend === 'webgpu' && softwareAdapter)
      reason += `; its adapter (${adapter ?? 'unknown'}) runs on the CPU, not a GPU`;
    fallbacks.push({ backend: t.backend, reason });
  }
  fallbacks.sort((a, b) => BACKEND_ORDER.indexOf(a.backend) - BACKEND_ORDER.indexOf(b.backend));
  if (choice) {
    await useBackend(choice.backend);
    for (const t of timings) if (t.backend !== choice.backend) await releaseBackend(t.backend);
    return {
      backend: choice.backend,
      adapter: choice.backend === 'webgpu' ? adapter : null,
      fallbacks,
      initMs: performance.now() - t0,
      choice,
    };
  }
  // No measured backend trains: the others in preference order, as a page without a choice would.
  const rest = BACKEND_ORDER.filter((b) => !plan.order.includes(b));
  const report = await selectBackend(rest, initBackend);
  for (const t of timings) await releaseBackend(t.backend);
  return {
    ...report,
    fallbacks: [...fallbacks, ...report.fallbacks],
    initMs: performance.now() - t0,
    choice: null,
  };
}
