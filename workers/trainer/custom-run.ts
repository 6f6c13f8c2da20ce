import { metricNumbers } from '../../src/lib/policy/metrics';
import type { MlpArgs } from '../../src/lib/policy/mlp';
import { now } from '../../src/lib/pipeline/events';
import { PARAMS_CHANNEL, type VersionAnnounce } from '../../src/lib/pipeline/params-channel';
import type { TrainOutcome, RunProgress } from '../../src/lib/pipeline/types';
import type { CustomTrainConfig } from '../../src/lib/custom/config';
import { MlpLearner, type CustomBatch } from '../../src/lib/custom/trainer';
import { withEviction } from '../../src/lib/storage/quota';
import {
  ensureRun,
  isMlpRecord,
  newestRecord,
  putVersion,
  setRunStatus,
} from '../../src/lib/storage/weights-store';
import type { TrainerContext } from './context';
import type { PipelineRunInit } from './pipeline-run';
import { Retention, versionRecord } from './retention';

/** How a custom-environment training is stored: a run of kind 'custom', its versions in `weights`. */
export type CustomRunInit = Omit<PipelineRunInit, 'keepConsumed'>;

/** What publishing a custom-environment version gives the page. */
export interface CustomPublished {
  version: number;
  /** Epoch ms the version was announced to the rollout workers. */
  publishedAt: number;
}

/**
 * The MLP policy of a custom JS environment being trained, the run it stores versions in, the
 * channel it announces them on (as a code run's), its retention.
 */
class CustomRun {
  readonly retention = new Retention();
  readonly channel = new BroadcastChannel(PARAMS_CHANNEL);
  constructor(
    readonly mlp: MlpLearner,
    readonly run: CustomRunInit,
  ) {}
  dispose(): void {
    this.channel.close();
    this.mlp.dispose();
  }
}

/** A custom JS environment's training: its MLP policy, trained and stored apart from the code policy. */
export function customRunHandlers(ctx: TrainerContext) {
  let current: CustomRun | undefined;

  function requireMlp(): MlpLearner {
    if (!current) throw new Error('no custom policy: call initCustom() first');
    return current.mlp;
  }

  /** Drops the previous policy (if any) before a new one is made. */
  function drop(): void {
    current?.dispose();
    current = undefined;
  }

  /**
   * Stores version `v` of the custom-environment policy (every parameter and Adam's state, with
   * the step's metrics and the training's progress; evicting old data if the quota is full), then
   * announces its weights to the rollout workers. Durable first, as a code run's publish.
   */
  async function publish(
    v: number,
    metrics: Record<string, number>,
    progress: RunProgress,
  ): Promise<CustomPublished> {
    // Held for the whole call: an initCustom() meanwhile gets a policy, run and retention of its own.
    const c = current;
    if (!c) throw new Error('no custom policy: call initCustom() first');
    const t0 = now();
    const d = await ctx.database();
    const checkpoint = await c.mlp.checkpoint();
    const record = versionRecord(c.run, v, checkpoint, metrics);
    await withEviction(
      d,
      () => putVersion(d, record, { progress }),
      (e) => {
        const t = now();
        ctx.emit({ lane: 'store', kind: 'evict', t0: t, t1: t, version: v, meta: { ...e, reason: 'quota' } });
      },
    );
    const publishedAt = now();
    ctx.emit({ lane: 'store', kind: 'publish', t0, t1: publishedAt, version: v });
    // The weights only: a rollout worker has no use for Adam's moments.
    const { optimizer: _optimizer, ...policy } = checkpoint;
    const announce: VersionAnnounce = { runId: c.run.runId, version: v, publishedAt, checkpoint: policy };
    c.channel.postMessage(announce);
    c.retention.queue(ctx, c.run);
    return { version: v, publishedAt };
  }

  return {
    /**
     * Builds a fresh MLP policy for a custom environment, replacing any previous one, and creates
     * the run its versions are stored in (status running).
     */
    async initCustom(args: MlpArgs, config: CustomTrainConfig, run: CustomRunInit): Promise<void> {
      drop();
      const d = await ctx.database();
      await ensureRun(d, { id: run.runId, name: run.name, config: run.config, kind: 'custom' });
      await setRunStatus(d, run.runId, 'running');
      current = new CustomRun(new MlpLearner(args, config), run);
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
      drop();
      const d = await ctx.database();
      const record = await newestRecord(d, run.runId);
      if (!record) throw new Error(`training ${run.runId} has no stored version to resume from (deleted?)`);
      if (!isMlpRecord(record))
        throw new Error(
          `run ${run.runId} is not a custom environment's training: resume it from the run list`,
        );
      const learner = await MlpLearner.restore(record.checkpoint, config);
      try {
        await setRunStatus(d, run.runId, 'running');
      } catch (err) {
        learner.dispose();
        throw err;
      }
      current = new CustomRun(learner, run);
      return { version: record.version, args: record.checkpoint.mlp };
    },

    /** Stores and announces version `v` of the policy as it is (version 0: the untrained policy). */
    publishCustom(
      v: number,
      metrics: Record<string, number>,
      progress: RunProgress,
    ): Promise<CustomPublished> {
      return publish(v, metrics, progress);
    },

    /**
     * One training step of a custom environment's pipeline: one update of the MLP on the batch,
     * then the next version stored and announced, as `trainAndPublish` does for a code run.
     */
    async trainAndPublishCustom(
      batch: CustomBatch,
      info: { fromVersion: number; progress: RunProgress },
    ): Promise<TrainOutcome> {
      const startedAt = now();
      const metrics = await requireMlp().update(batch);
      ctx.emit({
        lane: 'trainer',
        kind: 'train-step',
        t0: startedAt,
        t1: now(),
        version: info.fromVersion,
        meta: { loss: Number(metrics.loss.toFixed(4)), steps: batch.steps },
      });
      const published = await publish(info.fromVersion + 1, metricNumbers(metrics), info.progress);
      return { version: published.version, metrics, startedAt, publishedAt: published.publishedAt };
    },
  };
}
