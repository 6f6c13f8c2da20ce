/// <reference lib="webworker" />
import * as Comlink from 'comlink';
import * as tf from '@tensorflow/tfjs';
import {
  BACKEND_ORDER,
  selectBackend,
  type BackendName,
  type BackendReport,
} from '../src/lib/policy/backend';
import type { ModelArgs, TrainerConfig } from '../src/lib/policy/config';
import type { LoraConfig } from '../src/lib/policy/lora';
import { PolicyTrainer, type StepMetrics } from '../src/lib/policy/trainer';
import {
  packParams,
  packTensors,
  paramsFromCheckpoint,
  unpackTensors,
  type Checkpoint,
} from '../src/lib/policy/weights';
import { now, type TimelineEvent } from '../src/lib/pipeline/events';
import type { MlpArgs, MlpSnapshot } from '../src/lib/policy/mlp';
import type { TokenBatch } from '../src/lib/rl/batch';
import type { CustomTrainConfig } from '../src/lib/rl/custom-config';
import { MlpLearner, type CustomBatch } from '../src/lib/rl/custom-trainer';
import { imitationBatch } from '../src/lib/rl/synthetic';
import { openLabDb, type LabDB } from '../src/lib/storage/db';
import { ensureRun, getVersion, latestVersion, putVersion } from '../src/lib/storage/weights-store';
import { initBackend } from './tfjs-backends';

/** How the page starts the trainer. */
export interface TrainerInit {
  /** Backends to try, best first; defaults to webgpu → wasm → webgl → cpu. */
  backends?: BackendName[];
  model: ModelArgs;
  config: TrainerConfig;
  /** Train LoRA adapters on a frozen base instead of every parameter. */
  lora?: LoraConfig;
}

export interface TrainerInfo extends BackendReport {
  /** Scalar parameters of the policy. */
  parameters: number;
  /** Bytes of one packed weight version. */
  bytesPerVersion: number;
}

let trainer: PolicyTrainer | undefined;
/** The MLP policy of a custom JS environment, when one is being trained. */
let mlp: MlpLearner | undefined;
let db: LabDB | undefined;
let version = -1;
let batchSeed = 0;
let sink: ((events: TimelineEvent[]) => void) | undefined;

function emit(event: TimelineEvent): void {
  sink?.([event]);
}

function requireTrainer(): PolicyTrainer {
  if (!trainer) throw new Error('trainer not initialised: call init() first');
  return trainer;
}

async function database(): Promise<LabDB> {
  db ??= await openLabDb();
  return db;
}

const api = {
  /** Selects the backend, builds the policy, and reports where it runs. */
  async init(opts: TrainerInit): Promise<TrainerInfo> {
    const t0 = now();
    const report = await selectBackend(opts.backends ?? BACKEND_ORDER, initBackend);
    trainer?.dispose();
    trainer = new PolicyTrainer(opts.model, opts.config, undefined, opts.lora);
    version = -1;
    batchSeed = opts.config.seed;
    emit({ lane: 'trainer', kind: 'init', t0, t1: now(), version, meta: { backend: report.backend } });
    return { ...report, parameters: trainer.parameterCount, bytesPerVersion: trainer.parameterCount * 4 };
  },

  /**
   * Takes `steps` gradient steps on imitation batches (the foundation's training signal; the RL
   * batches of issue 5 replace it) and returns the metrics of each.
   */
  async train(steps: number): Promise<StepMetrics[]> {
    const t = requireTrainer();
    const out: StepMetrics[] = [];
    for (let i = 0; i < steps; i++) {
      const t0 = now();
      const batch = imitationBatch(t.config.batchSize, t.args.contextLength, batchSeed++);
      const m = await t.trainStep(batch);
      out.push(m);
      emit({
        lane: 'trainer',
        kind: 'train-step',
        t0,
        t1: now(),
        version,
        meta: { loss: m.loss, step: m.step },
      });
    }
    return out;
  },

  /** One gradient step on an RL batch built by the controller (issue 4's sync loop; issue 5's losses). */
  async trainBatch(batch: TokenBatch, v: number): Promise<StepMetrics> {
    const t = requireTrainer();
    const t0 = now();
    const m = await t.trainStep(batch);
    emit({
      lane: 'trainer',
      kind: 'train-step',
      t0,
      t1: now(),
      version: v,
      meta: { loss: m.loss, step: m.step },
    });
    return m;
  },

  /**
   * The current weights (no optimiser state), for rollout workers to adopt: every parameter, or
   * with LoRA only the adapters unless `full` (the base, published as version 0).
   */
  exportPolicy(full = false): Promise<Checkpoint> {
    return requireTrainer().exportPolicy(full);
  },

  /** Sets Adam's learning rate (fresh optimiser state). */
  setLearningRate(lr: number): void {
    requireTrainer().setLearningRate(lr);
  },

  /** Builds a fresh MLP policy for a custom environment (issue 4 §7), replacing any previous one. */
  initCustom(args: MlpArgs, config: CustomTrainConfig): void {
    mlp?.dispose();
    mlp = new MlpLearner(args, config);
  },

  /** One update of the custom-environment policy; returns the loss. */
  async trainCustom(batch: CustomBatch, v: number): Promise<number> {
    if (!mlp) throw new Error('no custom policy: call initCustom() first');
    const t0 = now();
    const loss = await mlp.update(batch);
    emit({ lane: 'trainer', kind: 'train-step', t0, t1: now(), version: v, meta: { loss, env: 'custom' } });
    return loss;
  },

  /** The custom-environment policy's weights, for the rollout worker to adopt. */
  exportCustomPolicy(): Promise<MlpSnapshot> {
    if (!mlp) throw new Error('no custom policy: call initCustom() first');
    return mlp.snapshot();
  },

  /** Per-parameter sums of |w|, to show that steps move the weights. */
  fingerprint(): Promise<number[]> {
    return requireTrainer().fingerprint();
  },

  /** Publishes the current weights and Adam state as the next version of `runId` in IndexedDB. */
  async save(
    runId: string,
    config: Record<string, unknown> = {},
  ): Promise<{ version: number; bytes: number }> {
    const t = requireTrainer();
    const t0 = now();
    const d = await database();
    await ensureRun(d, { id: runId, name: runId, config });
    const latest = await latestVersion(d, runId);
    const next = Math.max(version, latest?.version ?? -1) + 1;
    const optimizerWeights = await t.optimizer.getWeights();
    const checkpoint: Checkpoint = {
      format: 'sandbox-rl-lab/weights@1',
      model: t.args,
      params: await packParams(t.params),
      optimizer: await packTensors(optimizerWeights.map((w) => ({ name: w.name, tensor: w.tensor }))),
      step: t.step,
    };
    await putVersion(d, {
      runId,
      version: next,
      createdAt: Date.now(),
      checkpoint,
      metrics: { step: t.step },
      milestone: false,
    });
    version = next;
    const bytes = checkpoint.params.data.byteLength + (checkpoint.optimizer?.data.byteLength ?? 0);
    emit({ lane: 'store', kind: 'publish', t0, t1: now(), version, meta: { bytes } });
    return { version, bytes };
  },

  /** Loads a stored version (the latest when `v` is omitted) into the trainer, optimiser included. */
  async load(runId: string, v?: number): Promise<{ version: number; step: number }> {
    const t = requireTrainer();
    const t0 = now();
    const d = await database();
    const record = v === undefined ? await latestVersion(d, runId) : await getVersion(d, runId, v);
    if (!record) throw new Error(`run ${runId} has no stored version${v === undefined ? '' : ` ${v}`}`);
    const params = paramsFromCheckpoint(record.checkpoint);
    const config = t.config;
    t.dispose();
    trainer = new PolicyTrainer(record.checkpoint.model, config, params);
    trainer.step = record.checkpoint.step;
    if (record.checkpoint.optimizer) {
      const named = unpackTensors(record.checkpoint.optimizer);
      await trainer.optimizer.setWeights(named);
      tf.dispose(named.map((n) => n.tensor));
    }
    version = record.version;
    emit({ lane: 'store', kind: 'load', t0, t1: now(), version });
    return { version, step: trainer.step };
  },

  /** Registers the callback that receives timeline events (pass it through `Comlink.proxy`). */
  setEventSink(callback: (events: TimelineEvent[]) => void): void {
    sink = callback;
  },
};

export type TrainerApi = typeof api;

Comlink.expose(api);
