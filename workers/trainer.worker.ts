/// <reference lib="webworker" />
import * as Comlink from 'comlink';
import {
  BACKEND_ORDER,
  selectBackend,
  type BackendName,
  type BackendReport,
} from '../src/lib/policy/backend';
import type { ModelArgs, TrainerConfig } from '../src/lib/policy/config';
import type { LoraConfig } from '../src/lib/policy/lora';
import { missingBase, policyFromCheckpoint, trainerFromCheckpoint } from '../src/lib/policy/restore';
import type { Params } from '../src/lib/policy/model';
import { metricNumbers, type StepMetrics } from '../src/lib/policy/metrics';
import { PolicyTrainer } from '../src/lib/policy/trainer';
import { packOptimizer, type Checkpoint } from '../src/lib/policy/weights';
import { now, type TimelineEvent } from '../src/lib/pipeline/events';
import { PARAMS_CHANNEL, type VersionAnnounce } from '../src/lib/pipeline/params-channel';
import type { TrainOutcome } from '../src/lib/pipeline/types';
import { snapshotFromCheckpoint, type MlpArgs, type MlpSnapshot } from '../src/lib/policy/mlp';
import type { Eviction } from '../src/lib/storage/quota';
import type { TokenBatch } from '../src/lib/rl/batch';
import type { CustomTrainConfig } from '../src/lib/rl/custom-config';
import { MlpLearner, type CustomBatch } from '../src/lib/rl/custom-trainer';
import { imitationBatch } from '../src/lib/rl/synthetic';
import { ppoUpdate } from '../src/lib/rl/update';
import {
  LabDbConnection,
  type LabDB,
  type RunProgress,
  type RunRecord,
  type WeightsRecord,
} from '../src/lib/storage/db';
import { withEviction } from '../src/lib/storage/quota';
import { trimConsumed } from '../src/lib/storage/trajectories-store';
import {
  ensureRun,
  getVersion,
  isMilestoneVersion,
  isMlpRecord,
  latestFullVersion,
  latestVersion,
  newestRecord,
  loraBaseOf,
  pruneVersions,
  putVersion,
  setRunStatus,
} from '../src/lib/storage/weights-store';
import type { PolicySettings } from '../src/lib/pipeline/run-settings';
import { backendInit } from './tfjs-backends';

/** Versions of the trainer panel's saved weights kept (kind 'check'): it loads the newest. */
const CHECK_VERSIONS_KEPT = 3;

/** How the page starts the trainer. */
export interface TrainerInit {
  /** Backends to try, best first; defaults to webgpu → wasm → webgl → cpu, skipping a software WebGPU adapter. */
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

/** How the pipeline starts (or resumes) a run in the trainer (issue 6). */
export interface PipelineRunInit {
  runId: string;
  /** Label shown in the run list. */
  name: string;
  /** The run's whole configuration (JSON), stored with it for resume. */
  config: Record<string, unknown>;
  /** Retention: the newest `keepVersions` versions stay, plus version 0 and every `milestoneEvery`-th. */
  keepVersions: number;
  milestoneEvery: number;
  /** Consumed trajectories kept (the replay ring); unconsumed ones are never deleted. */
  keepConsumed: number;
}

/** How a custom-environment training is stored: a run of kind 'custom', its versions in `weights`. */
export type CustomRunInit = Omit<PipelineRunInit, 'keepConsumed'>;

/** What publishing a custom-environment version gives the page. */
export interface CustomPublished {
  /** The policy as the rollout workers act with it. */
  snapshot: MlpSnapshot;
  /** What the write deleted to make room when the quota was full (the page says so). */
  evicted?: Eviction;
}

/** What a resumed run continues from. */
export interface ResumePoint {
  version: number;
  step: number;
  run: RunRecord;
  /** The metrics stored with that version (the numbers of its step's). */
  metrics: Record<string, number>;
}

let trainer: PolicyTrainer | undefined;
/** The pipeline run the trainer publishes for, the channel it announces versions on, its retention. */
let pipelineRun: (PipelineRunInit & { channel: BroadcastChannel; retention: Retention }) | undefined;
/** The MLP policy of a custom JS environment, when one is being trained. */
let mlp: MlpLearner | undefined;
/** The run the custom-environment training stores its versions in. */
let customRun: CustomRunInit | undefined;
/**
 * A run's retention: the newest version it has examined (each pass reads only newer ones), and
 * the pass in progress. Each run has its own, so a late pass of the previous run (between the
 * legs of a race) never moves the next run's mark.
 */
interface Retention {
  through: number;
  pass: Promise<void>;
}
const newRetention = (): Retention => ({ through: -Infinity, pass: Promise.resolve() });
/** The custom run's retention. */
let customRetention = newRetention();
/** This worker's connection (closed for a newer page in another tab; its next use then says so). */
const db = new LabDbConnection();
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

function database(): Promise<LabDB> {
  return db.get();
}

/** A trainer continuing from a stored version (a LoRA version on its run's base) of a run set to `lora`. */
async function restoreTrainer(
  d: LabDB,
  record: WeightsRecord,
  config: TrainerConfig,
  lora?: LoraConfig,
): Promise<PolicyTrainer> {
  return trainerFromCheckpoint(record.checkpoint, await loraBaseOf(d, record), config, lora);
}

function openPipelineRun(init: PipelineRunInit): void {
  pipelineRun?.channel.close();
  pipelineRun = { ...init, channel: new BroadcastChannel(PARAMS_CHANNEL), retention: newRetention() };
}

/**
 * Publishes version `v` of the pipeline run: durable first (weights, optimiser state, consumed
 * marks and progress in one transaction, evicting old data if the quota is full), then announced
 * with the weights, then retention (off the critical path).
 */
async function publishVersion(
  v: number,
  consumed: number[],
  progress: RunProgress,
  metrics: Record<string, number>,
): Promise<{ version: number; publishedAt: number }> {
  const t = requireTrainer();
  const r = pipelineRun;
  if (!r) throw new Error('no pipeline run: call startRun() or resumeRun() first');
  const t0 = now();
  const d = await database();
  const policy = await t.exportPolicy(v === 0);
  const checkpoint: Checkpoint = { ...policy, optimizer: await packOptimizer(t.optimizer) };
  const tPacked = now();
  const record = versionRecord(r, v, checkpoint, metrics);
  await withEviction(
    d,
    () => putVersion(d, record, { consumed, progress }),
    (e) =>
      emit({
        lane: 'store',
        kind: 'evict',
        t0: now(),
        t1: now(),
        version: v,
        meta: { ...e, reason: 'quota' },
      }),
  );
  const bytes = checkpoint.params.data.byteLength + (checkpoint.optimizer?.data.byteLength ?? 0);
  emit({
    lane: 'store',
    kind: 'publish',
    t0,
    t1: now(),
    version: v,
    meta: {
      bytes,
      // What a rollout worker receives: every parameter, or with LoRA the adapters only.
      policyBytes: policy.params.data.byteLength,
      consumed: consumed.length,
      packMs: Math.round(tPacked - t0),
      writeMs: Math.round(now() - tPacked),
    },
  });
  const publishedAt = now();
  const announce: VersionAnnounce = { runId: r.runId, version: v, publishedAt, checkpoint: policy };
  r.channel.postMessage(announce);
  version = v;
  queueRetention(r.retention, r);
  return { version: v, publishedAt };
}

/** Version 0 and every `milestoneEvery`-th version of a run are kept for good (publish marks them). */
function isMilestone(r: Pick<PipelineRunInit, 'milestoneEvery'>, v: number): boolean {
  return isMilestoneVersion(v, r.milestoneEvery);
}

/** The stored record of version `v` of a run (either kind of policy). */
function versionRecord<C>(
  r: Pick<PipelineRunInit, 'runId' | 'milestoneEvery'>,
  v: number,
  checkpoint: C,
  metrics: Record<string, number>,
): Omit<WeightsRecord, 'checkpoint'> & { checkpoint: C } {
  return {
    runId: r.runId,
    version: v,
    createdAt: Date.now(),
    checkpoint,
    metrics,
    milestone: isMilestone(r, v),
  };
}

/**
 * Queues a pass that deletes versions (and, for a run that stores trajectories, consumed
 * trajectories) past the run's retention: off the critical path, one pass at a time, routine (no
 * timeline mark). Milestones go by the rule their versions were written under, so no record is
 * read. `ret` is the run's own retention, taken when its version was published.
 */
function queueRetention(ret: Retention, r: CustomRunInit & { keepConsumed?: number }): void {
  ret.pass = ret.pass
    .then(async () => {
      const d = await database();
      ret.through = (
        await pruneVersions(d, r.runId, r.keepVersions, ret.through, (v) => isMilestone(r, v))
      ).examinedThrough;
      if (r.keepConsumed !== undefined) await trimConsumed(d, r.runId, r.keepConsumed);
    })
    .catch(() => undefined);
}

const api = {
  /** Selects the backend, builds the policy, and reports where it runs. */
  async init(opts: TrainerInit): Promise<TrainerInfo> {
    const t0 = now();
    const report = await selectBackend(
      opts.backends ?? BACKEND_ORDER,
      backendInit({ allowSoftwareWebGPU: opts.backends !== undefined }),
    );
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

  /**
   * The current weights (no optimiser state), for rollout workers to adopt: every parameter, or
   * with LoRA only the adapters unless `full` (the base, published as version 0).
   */
  exportPolicy(full = false): Promise<Checkpoint> {
    return requireTrainer().exportPolicy(full);
  },

  /** Every parameter of the policy as it runs (with LoRA, merged): for evaluating it elsewhere. */
  exportMerged(): Promise<Checkpoint> {
    return requireTrainer().exportMerged();
  },

  /**
   * Fresh weights for a new run: the policy re-initialised from `seed` (every parameter trained,
   * or LoRA adapters on it), with the given policy loss and learning rate and a fresh Adam state.
   */
  async resetPolicy(opts: {
    seed: number;
    loss: TrainerConfig['loss'];
    learningRate: number;
    /** Train LoRA adapters on the fresh base (null: every parameter); omitted keeps the trainer's. */
    lora?: LoraConfig | null;
    /** Start from this stored version's policy instead of fresh weights from `seed`. */
    startFrom?: { runId: string; version: number } | null;
  }): Promise<{ parameters: number }> {
    const t = requireTrainer();
    const config: TrainerConfig = {
      ...t.config,
      seed: opts.seed,
      loss: opts.loss,
      learningRate: opts.learningRate,
    };
    const lora = opts.lora === undefined ? t.lora : (opts.lora ?? undefined);
    let args = t.args;
    let params: Params | undefined;
    if (opts.startFrom) {
      const { runId, version: v } = opts.startFrom;
      const d = await database();
      const record = await getVersion(d, runId, v);
      if (!record)
        throw new Error(`cannot start from run ${runId} version ${v}: it is not stored (deleted or pruned)`);
      params = policyFromCheckpoint(record.checkpoint, await loraBaseOf(d, record));
      args = record.checkpoint.model;
    }
    t.dispose();
    trainer = new PolicyTrainer(args, config, params, lora);
    version = -1;
    return { parameters: trainer.parameterCount };
  },

  /** Sets Adam's learning rate (fresh optimiser state). */
  setLearningRate(lr: number): void {
    requireTrainer().setLearningRate(lr);
  },

  /**
   * Builds a fresh MLP policy for a custom environment (issue 4 §7), replacing any previous one,
   * and creates the run its versions are stored in (status running).
   */
  async initCustom(args: MlpArgs, config: CustomTrainConfig, run: CustomRunInit): Promise<void> {
    mlp?.dispose();
    mlp = undefined;
    customRun = undefined;
    const d = await database();
    await ensureRun(d, { id: run.runId, name: run.name, config: run.config, kind: 'custom' });
    await setRunStatus(d, run.runId, 'running');
    mlp = new MlpLearner(args, config);
    customRun = run;
    customRetention = newRetention();
  },

  /**
   * Resumes a stored custom-environment training: the MLP of its newest stored version, with
   * Adam's state and update count, replaces any previous policy, and the run is marked running
   * again. Returns that version and the MLP's shape (the page checks it against the environment).
   */
  async resumeCustom(
    config: CustomTrainConfig,
    run: CustomRunInit,
  ): Promise<{ version: number; args: MlpArgs }> {
    mlp?.dispose();
    mlp = undefined;
    customRun = undefined;
    const d = await database();
    const record = await newestRecord(d, run.runId);
    if (!record) throw new Error(`training ${run.runId} has no stored version to resume from (deleted?)`);
    if (!isMlpRecord(record))
      throw new Error(`run ${run.runId} is not a custom environment's training: resume it from the run list`);
    const learner = await MlpLearner.restore(record.checkpoint, config);
    try {
      await setRunStatus(d, run.runId, 'running');
    } catch (err) {
      learner.dispose();
      throw err;
    }
    mlp = learner;
    customRun = run;
    customRetention = newRetention();
    return { version: record.version, args: record.checkpoint.mlp };
  },

  /**
   * Stores version `v` of the custom-environment policy (every parameter and Adam's state, with
   * the step's metrics and the training's progress; evicting old data if the quota is full), then
   * gives its snapshot for the rollout workers. Durable first, as a pipeline run's publish.
   */
  async publishCustom(
    v: number,
    metrics: Record<string, number>,
    progress: RunProgress,
  ): Promise<CustomPublished> {
    // Held for the whole call: an initCustom() meanwhile gets a policy, run and retention of its own.
    const r = customRun;
    const learner = mlp;
    const retention = customRetention;
    if (!learner || !r) throw new Error('no custom policy: call initCustom() first');
    const d = await database();
    const checkpoint = await learner.checkpoint();
    const record = versionRecord(r, v, checkpoint, metrics);
    let evicted: Eviction | undefined;
    await withEviction(
      d,
      () => putVersion(d, record, { progress }),
      (e) => (evicted = e),
    );
    queueRetention(retention, r);
    return { snapshot: snapshotFromCheckpoint(checkpoint), ...(evicted ? { evicted } : {}) };
  },

  /** One update of the custom-environment policy (the pipeline's training step); returns its metrics. */
  trainCustom(batch: CustomBatch): Promise<StepMetrics> {
    if (!mlp) throw new Error('no custom policy: call initCustom() first');
    return mlp.update(batch);
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

  /**
   * Publishes the current policy and Adam state as the next version of `runId` in IndexedDB, as a
   * pipeline publish stores it: every parameter, or with LoRA the adapters (and the `lora` field).
   * A LoRA version merges into the run's newest full version below it: when that is not this
   * trainer's base (none yet, or another policy's), the base is stored first, as its own version.
   */
  async save(
    runId: string,
    config: Record<string, unknown> = {},
    kind?: RunRecord['kind'],
  ): Promise<{ version: number; bytes: number }> {
    const t = requireTrainer();
    const t0 = now();
    const d = await database();
    await ensureRun(d, { id: runId, name: runId, config, ...(kind ? { kind } : {}) });
    const latest = await latestVersion(d, runId);
    let next = Math.max(version, latest?.version ?? -1) + 1;
    const checkpoint: Checkpoint = {
      ...(await t.exportPolicy()),
      optimizer: await packOptimizer(t.optimizer),
    };
    const record: WeightsRecord = {
      runId,
      version: next,
      createdAt: Date.now(),
      checkpoint,
      metrics: { step: t.step },
      milestone: false,
    };
    const base = await missingBase(t, await loraBaseOf(d, record));
    let bytes = checkpoint.params.data.byteLength + (checkpoint.optimizer?.data.byteLength ?? 0);
    if (base) {
      await putVersion(d, { ...record, checkpoint: base, metrics: { step: base.step } });
      bytes += base.params.data.byteLength;
      next += 1;
    }
    await putVersion(d, { ...record, version: next });
    version = next;
    if (kind === 'check') {
      // The trainer panel loads only the newest: keep a few, and the full version a LoRA one
      // merges into (a check has no run list to delete them from).
      const base = await latestFullVersion(d, runId, next);
      await pruneVersions(d, runId, CHECK_VERSIONS_KEPT, -Infinity, (v) => v === base?.version);
    }
    emit({ lane: 'store', kind: 'publish', t0, t1: now(), version, meta: { bytes } });
    return { version, bytes };
  },

  /**
   * Loads a stored version (the latest when `v` is omitted) into the trainer, optimiser included;
   * null when the run has nothing stored and no version was asked for.
   */
  async load(runId: string, v?: number): Promise<{ version: number; step: number } | null> {
    const t = requireTrainer();
    const t0 = now();
    const d = await database();
    const record = v === undefined ? await latestVersion(d, runId) : await getVersion(d, runId, v);
    if (!record && v === undefined) return null;
    if (!record) throw new Error(`run ${runId} has no stored version ${v}`);
    const restored = await restoreTrainer(d, record, t.config);
    t.dispose();
    trainer = restored;
    version = record.version;
    emit({ lane: 'store', kind: 'load', t0, t1: now(), version });
    return { version, step: trainer.step };
  },

  /** Starts a pipeline run: stores the run and publishes the current weights as version 0. */
  async startRun(
    init: PipelineRunInit,
    progress: RunProgress,
  ): Promise<{ version: number; publishedAt: number }> {
    requireTrainer();
    const d = await database();
    if (await d.get('runs', init.runId)) throw new Error(`a run named ${init.runId} exists already`);
    await ensureRun(d, { id: init.runId, name: init.name, config: init.config });
    openPipelineRun(init);
    await setRunStatus(d, init.runId, 'running');
    return publishVersion(0, [], progress, {});
  },

  /**
   * Resumes a stored run: the trainer continues from its newest version, with its optimiser
   * state and step count, and the run's policy settings (`policy`: its loss, learning rate and
   * LoRA setting). The rollout workers adopt the same version from the store.
   */
  async resumeRun(init: PipelineRunInit, policy: PolicySettings): Promise<ResumePoint> {
    const t = requireTrainer();
    const t0 = now();
    const d = await database();
    const run = await d.get('runs', init.runId);
    if (!run) throw new Error(`no stored run ${init.runId}`);
    const record = await latestVersion(d, init.runId);
    if (!record) throw new Error(`run ${init.runId} has no stored version to resume from`);
    if (!record.checkpoint.optimizer) throw new Error(`version ${record.version} has no optimiser state`);
    // The run's loss and learning rate, with the stored Adam moments.
    const restored = await restoreTrainer(
      d,
      record,
      { ...t.config, seed: policy.seed, loss: policy.loss, learningRate: policy.learningRate },
      policy.lora ?? undefined,
    );
    t.dispose();
    trainer = restored;
    version = record.version;
    openPipelineRun(init);
    await setRunStatus(d, init.runId, 'running');
    emit({ lane: 'store', kind: 'load', t0, t1: now(), version, meta: { resume: init.runId } });
    return { version, step: trainer.step, run, metrics: record.metrics };
  },

  /**
   * One training step of the pipeline: `updates` optimiser steps on the batch (π_prox computed
   * once, before them), then the next version published: stored with the optimiser state
   * (marking `seqs` consumed in the same transaction), announced, and old versions pruned.
   */
  async trainAndPublish(
    batch: TokenBatch,
    info: {
      fromVersion: number;
      seqs: number[];
      updates: number;
      /** The scheduled learning rate of this step (Adam keeps its moments). */
      learningRate?: number;
      progress: RunProgress;
    },
  ): Promise<TrainOutcome> {
    const t = requireTrainer();
    const startedAt = now();
    const metrics = await ppoUpdate(t, batch, {
      updates: info.updates,
      learningRate: info.learningRate,
      clock: now,
      onStep: (m, epoch, t0) =>
        emit({
          lane: 'trainer',
          kind: 'train-step',
          t0,
          t1: now(),
          version: info.fromVersion,
          meta: {
            loss: Number(m.loss.toFixed(4)),
            step: m.step,
            kl: Number(m.approxKl.toExponential(2)),
            // Before the first step: π_prox, when computed apart.
            ...(epoch === 0 ? { prepMs: Math.round(t0 - startedAt) } : {}),
          },
        }),
    });
    // Every number of the step's metrics: a restart after a publish whose answer was lost reports them.
    const published = await publishVersion(
      info.fromVersion + 1,
      info.seqs,
      info.progress,
      metricNumbers(metrics),
    );
    return { version: published.version, metrics, startedAt, publishedAt: published.publishedAt };
  },

  /**
   * Leaves the pipeline run `runId`, recording how it ended and where it stands: `progress` also
   * counts the episodes played since the last version (whose groups a resume brings back), and
   * `consumed` are the samples dropped untrained since then. A trainer restarted while the run
   * stopped does not hold it, and records it all the same.
   */
  async stopRun(
    runId: string,
    status: RunRecord['status'],
    stopped: { progress?: RunProgress; consumed?: readonly number[] } = {},
  ): Promise<Eviction | null> {
    if (pipelineRun?.runId === runId) {
      pipelineRun.channel.close();
      pipelineRun = undefined;
    }
    const d = await database();
    let evicted: Eviction | null = null;
    await withEviction(
      d,
      () => setRunStatus(d, runId, status, stopped),
      (e) => (evicted = e),
    );
    return evicted;
  },

  /** The heartbeat: answers as soon as the thread is free. */
  stats(): { at: number; step: number; version: number } {
    return { at: now(), step: trainer?.step ?? 0, version };
  },

  /** Fault injection for tests (`?debug`): `crash` throws an uncaught error and closes the worker. */
  debugFault(kind: 'crash' | 'exit'): void {
    if (kind === 'crash') {
      setTimeout(() => {
        setTimeout(() => self.close(), 0);
        throw new Error('injected crash (debug fault)');
      }, 0);
    } else {
      self.close();
    }
  },

  /** Registers the callback that receives timeline events (pass it through `Comlink.proxy`). */
  setEventSink(callback: (events: TimelineEvent[]) => void): void {
    sink = callback;
  },
};

export type TrainerApi = typeof api;

Comlink.expose(api);
