import type { StepMetrics } from '../../src/lib/policy/metrics';
import { snapshotFromCheckpoint, type MlpArgs, type MlpSnapshot } from '../../src/lib/policy/mlp';
import type { CustomTrainConfig } from '../../src/lib/rl/custom-config';
import { MlpLearner, type CustomBatch } from '../../src/lib/rl/custom-trainer';
import type { RunProgress } from '../../src/lib/storage/db';
import { withEviction, type Eviction } from '../../src/lib/storage/quota';
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
  /** The policy as the rollout workers act with it. */
  snapshot: MlpSnapshot;
  /** What the write deleted to make room when the quota was full (the page says so). */
  evicted?: Eviction;
}

/** The MLP policy of a custom JS environment being trained, the run it stores versions in, its retention. */
class CustomRun {
  readonly retention = new Retention();
  constructor(
    readonly mlp: MlpLearner,
    readonly run: CustomRunInit,
  ) {}
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
    current?.mlp.dispose();
    current = undefined;
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
      const c = current;
      if (!c) throw new Error('no custom policy: call initCustom() first');
      const d = await ctx.database();
      const checkpoint = await c.mlp.checkpoint();
      const record = versionRecord(c.run, v, checkpoint, metrics);
      let evicted: Eviction | undefined;
      await withEviction(
        d,
        () => putVersion(d, record, { progress }),
        (e) => (evicted = e),
      );
      c.retention.queue(ctx, c.run);
      return { snapshot: snapshotFromCheckpoint(checkpoint), ...(evicted ? { evicted } : {}) };
    },

    /** One update of the custom-environment policy (the pipeline's training step); returns its metrics. */
    trainCustom(batch: CustomBatch): Promise<StepMetrics> {
      return requireMlp().update(batch);
    },

    /** The custom-environment policy's weights, for the rollout worker to adopt. */
    exportCustomPolicy(): Promise<MlpSnapshot> {
      return requireMlp().snapshot();
    },
  };
}
