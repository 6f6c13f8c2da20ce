/// <reference lib="webworker" />
import { selectBackend, type BackendName, type BackendReport } from '../../src/lib/policy/backend';
import type { BackendChoice } from '../../src/lib/policy/backend-choice';
import { type ModelArgs } from '../../src/lib/policy/config';
import type { LoraConfig } from '../../src/lib/policy/lora';
import type { StepMetrics } from '../../src/lib/policy/metrics';
import type { Params } from '../../src/lib/policy/model';
import { policyFromCheckpoint } from '../../src/lib/rl/restore';
import { PolicyTrainer } from '../../src/lib/rl/trainer';
import { paramsFromCheckpoint, type Checkpoint } from '../../src/lib/policy/weights';
import { loadBuiltInBase } from '../../src/lib/policy/bases';
import type { TrainerSlice } from '../../src/lib/config/run-config';
import { now, type TimelineEvent } from '../../src/lib/pipeline/events';
import { imitationBatch } from '../../src/lib/rl/synthetic';
import { getVersion, loraBaseOf } from '../../src/lib/storage/weights-store';
import { injectFault } from '../fault';
import { initBackend } from '../tfjs-backends';
import { chooseByMeasurement } from './backend-measure';
import type { TrainerContext } from './context';
import { trainerConfigOf, type TrainerConfig } from '../../src/lib/rl/learner-config';

/** How the page starts the trainer. */
export interface TrainerInit {
  /**
   * Backends to try, best first, unmeasured (the URL's `?backend=`); when omitted the trainer
   * measures wasm and webgpu and trains on the faster.
   */
  backends?: BackendName[];
  model: ModelArgs;
  config: TrainerConfig;
  /** Train LoRA adapters on a frozen base instead of every parameter. */
  lora?: LoraConfig;
}

export interface TrainerInfo extends BackendReport {
  /** The measurement the backend was chosen by; null when `backends` forced it or nothing measured could train. */
  choice: BackendChoice | null;
  /** Scalar parameters of the policy. */
  parameters: number;
  /** Bytes of one packed weight version. */
  bytesPerVersion: number;
}

/** The policy itself: building it, imitation steps, its weights, and the worker's heartbeat. */
export function policyHandlers(ctx: TrainerContext) {
  return {
    /** Selects the backend (by measurement unless forced), builds the policy, and reports where it runs. */
    async init(opts: TrainerInit): Promise<TrainerInfo> {
      const t0 = now();
      const report = opts.backends
        ? { ...(await selectBackend(opts.backends, initBackend)), choice: null }
        : await chooseByMeasurement(opts, (e) => ctx.emit(e));
      ctx.trainer?.dispose();
      const trainer = new PolicyTrainer(opts.model, opts.config, undefined, opts.lora);
      ctx.trainer = trainer;
      ctx.version = -1;
      ctx.batchSeed = opts.config.seed;
      ctx.emit({
        lane: 'trainer',
        kind: 'init',
        t0,
        t1: now(),
        version: ctx.version,
        meta: {
          backend: report.backend,
          chosenBy: report.choice ? 'measurement' : opts.backends ? 'url' : 'fallback',
          ...(report.choice ? { stepMs: report.choice.label } : {}),
        },
      });
      return { ...report, parameters: trainer.parameterCount, bytesPerVersion: trainer.parameterCount * 4 };
    },

    /**
     * Takes `steps` gradient steps on imitation batches (the trainer panel's check of the
     * training path) and returns the metrics of each.
     */
    async train(steps: number): Promise<StepMetrics[]> {
      const t = ctx.requireTrainer();
      const out: StepMetrics[] = [];
      for (let i = 0; i < steps; i++) {
        const t0 = now();
        const batch = imitationBatch(t.config.batchSize, t.args.contextLength, ctx.batchSeed++);
        const m = await t.trainStep(batch);
        out.push(m);
        ctx.emit({
          lane: 'trainer',
          kind: 'train-step',
          t0,
          t1: now(),
          version: ctx.version,
          meta: { loss: m.loss, step: m.step },
        });
      }
      return out;
    },

    /**
     * The current weights (no optimiser state), for rollout workers to adopt: every parameter, or
     * with LoRA only the adapters unless `full` (the base, published as version 0).
     */
    exportPolicy(full = false): Promise<Checkpoint> {
      return ctx.requireTrainer().exportPolicy(full);
    },

    /** Every parameter of the policy as it runs (with LoRA, merged): for evaluating it elsewhere. */
    exportMerged(): Promise<Checkpoint> {
      return ctx.requireTrainer().exportMerged();
    },

    /**
     * Fresh weights for a new run: the policy of `run.policy` (its model re-initialised from
     * `run.seed`, or its start point; every parameter trained, or LoRA adapters on it), with the
     * run's learner and a fresh Adam state.
     */
    async resetPolicy(run: TrainerSlice): Promise<{ parameters: number }> {
      const t = ctx.requireTrainer();
      const config: TrainerConfig = trainerConfigOf(run.learner, run.seed);
      const { startFrom } = run.policy;
      const lora = run.policy.lora ?? undefined;
      let args = run.policy.model;
      let params: Params | undefined;
      if (startFrom && 'base' in startFrom) {
        const base = await loadBuiltInBase(startFrom.base);
        params = paramsFromCheckpoint(base);
        args = base.model;
      } else if (startFrom) {
        const { runId, version: v } = startFrom;
        const d = await ctx.database();
        const record = await getVersion(d, runId, v);
        if (!record)
          throw new Error(
            `cannot start from run ${runId} version ${v}: it is not stored (deleted or pruned)`,
          );
        params = policyFromCheckpoint(record.checkpoint, await loraBaseOf(d, record));
        args = record.checkpoint.model;
      }
      t.dispose();
      const trainer = new PolicyTrainer(args, config, params, lora);
      ctx.trainer = trainer;
      ctx.version = -1;
      return { parameters: trainer.parameterCount };
    },

    /** Sets Adam's learning rate (fresh optimiser state). */
    setLearningRate(lr: number): void {
      ctx.requireTrainer().setLearningRate(lr);
    },

    /** Per-parameter sums of |w|, to show that steps move the weights. */
    fingerprint(): Promise<number[]> {
      return ctx.requireTrainer().fingerprint();
    },

    /** The heartbeat: answers as soon as the thread is free. */
    stats(): { at: number; step: number; version: number } {
      return { at: now(), step: ctx.trainer?.step ?? 0, version: ctx.version };
    },

    /** Fault injection for tests (`?debug`): `crash` throws an uncaught error and closes the worker. */
    debugFault(kind: 'crash' | 'exit'): void {
      injectFault(kind);
    },

    /** Registers the callback that receives timeline events (pass it through `Comlink.proxy`). */
    setEventSink(callback: (events: TimelineEvent[]) => void): void {
      ctx.setSink(callback);
    },
  };
}
