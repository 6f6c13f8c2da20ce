import { metricNumbers } from '../../src/lib/policy/metrics';
import { packOptimizer, type Checkpoint } from '../../src/lib/policy/weights';
import { now } from '../../src/lib/pipeline/events';
import { PARAMS_CHANNEL, type VersionAnnounce } from '../../src/lib/pipeline/params-channel';
import type { TrainerSlice } from '../../src/lib/config/run-config';
import { trainerConfigOf } from '../../src/lib/rl/learner-config';
import type { TrainOutcome, RunProgress } from '../../src/lib/pipeline/types';
import type { TokenBatch } from '../../src/lib/rl/batch';
import { freshOptimizerNotice } from '../../src/lib/rl/restore';
import { ppoUpdate } from '../../src/lib/rl/update';
import type { RunRecord, WeightsRecord } from '../../src/lib/storage/db';
import { withEviction, type Eviction } from '../../src/lib/storage/quota';
import { ensureRun, latestVersion, putVersion, setRunStatus } from '../../src/lib/storage/weights-store';
import { restoreTrainer, type TrainerContext } from './context';
import { Retention, versionRecord } from './retention';

/** How the pipeline starts (or resumes) a run in the trainer. */
export interface PipelineRunInit {
  runId: string;
  /** Label shown in the run list. */
  name: string;
  /** The run's whole configuration (JSON), stored with it for resume. */
  config: Record<string, unknown>;
  /** Retention: the newest `keepVersions` versions stay, version 0, and milestones every `milestoneEvery`-th thinning with age. */
  keepVersions: number;
  milestoneEvery: number;
  /** Consumed trajectories kept (the replay ring); unconsumed ones are never deleted. */
  keepConsumed: number;
}

/** What a resumed run continues from. */
export interface ResumePoint {
  version: number;
  step: number;
  run: RunRecord;
  /** The metrics stored with that version (the numbers of its step's). */
  metrics: Record<string, number>;
  /** Said when the version held no optimiser state and Adam's moments start fresh. */
  notice?: string;
}

/** The pipeline run the trainer publishes for: the channel it announces versions on, its retention. */
class PipelineRun {
  readonly channel = new BroadcastChannel(PARAMS_CHANNEL);
  readonly retention = new Retention();
  constructor(readonly init: PipelineRunInit) {}
}

/** A code-writing run of the pipeline: start or resume, train and publish each version, stop. */
export function pipelineRunHandlers(ctx: TrainerContext) {
  let current: PipelineRun | undefined;

  function open(init: PipelineRunInit): void {
    current?.channel.close();
    current = new PipelineRun(init);
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
    importance?: WeightsRecord['importance'],
  ): Promise<{ version: number; publishedAt: number }> {
    const t = ctx.requireTrainer();
    const r = current;
    if (!r) throw new Error('no pipeline run: call startRun() or resumeRun() first');
    const t0 = now();
    const d = await ctx.database();
    const policy = await t.exportPolicy(v === 0);
    const checkpoint: Checkpoint = { ...policy, optimizer: await packOptimizer(t.optimizer) };
    const tPacked = now();
    const record = {
      ...versionRecord(r.init, v, checkpoint, metrics),
      ...(importance ? { importance } : {}),
    };
    await withEviction(
      d,
      () => putVersion(d, record, { consumed, progress }),
      (e) =>
        ctx.emit({
          lane: 'store',
          kind: 'evict',
          t0: now(),
          t1: now(),
          version: v,
          meta: { ...e, reason: 'quota' },
        }),
    );
    const bytes = checkpoint.params.data.byteLength + (checkpoint.optimizer?.data.byteLength ?? 0);
    ctx.emit({
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
    const announce: VersionAnnounce = { runId: r.init.runId, version: v, publishedAt, checkpoint: policy };
    r.channel.postMessage(announce);
    ctx.version = v;
    r.retention.queue(ctx, r.init);
    return { version: v, publishedAt };
  }

  return {
    /** Starts a pipeline run: stores the run and publishes the current weights as version 0. */
    async startRun(
      init: PipelineRunInit,
      progress: RunProgress,
    ): Promise<{ version: number; publishedAt: number }> {
      ctx.requireTrainer();
      const d = await ctx.database();
      if (await d.get('runs', init.runId)) throw new Error(`a run named ${init.runId} exists already`);
      await ensureRun(d, { id: init.runId, name: init.name, config: init.config });
      open(init);
      await setRunStatus(d, init.runId, 'running');
      return publishVersion(0, [], progress, {});
    },

    /**
     * Resumes a stored run: the trainer continues from its newest version, with its optimiser
     * state and step count, and the run's learner and LoRA setting (its start point is in its
     * versions already). The rollout workers adopt the same version from the store.
     */
    async resumeRun(init: PipelineRunInit, settings: TrainerSlice): Promise<ResumePoint> {
      const t = ctx.requireTrainer();
      const t0 = now();
      const d = await ctx.database();
      const run = await d.get('runs', init.runId);
      if (!run) throw new Error(`no stored run ${init.runId}`);
      const record = await latestVersion(d, init.runId);
      if (!record) throw new Error(`run ${init.runId} has no stored version to resume from`);
      // The newest version keeps its Adam moments; one without them (stored by an older build,
      // or its newest lost to a fault) restarts them, and the resume says so.
      const notice = freshOptimizerNotice(record.checkpoint, record.version);
      // The run's learner, with the stored Adam moments.
      const restored = await restoreTrainer(
        d,
        record,
        trainerConfigOf(settings.learner, settings.seed),
        settings.policy.lora ?? undefined,
      );
      t.dispose();
      ctx.trainer = restored;
      ctx.version = record.version;
      open(init);
      await setRunStatus(d, init.runId, 'running');
      ctx.emit({
        lane: 'store',
        kind: 'load',
        t0,
        t1: now(),
        version: ctx.version,
        meta: { resume: init.runId, ...(notice ? { freshOptimizer: true } : {}) },
      });
      return {
        version: ctx.version,
        step: restored.step,
        run,
        metrics: record.metrics,
        ...(notice ? { notice } : {}),
      };
    },

    /**
     * One training step of the pipeline: one PPO update of `updates` optimiser steps on the batch
     * (`rl/update.ts`), then the next version published: stored with the optimiser state
     * (marking `seqs` consumed in the same transaction), announced, and old versions pruned.
     */
    async trainAndPublish(
      batch: TokenBatch,
      info: {
        fromVersion: number;
        seqs: number[];
        /** The batch's success share: the update strategy's performance. */
        performance?: number;
        updates: number;
        /** The scheduled learning rate of this step (Adam keeps its moments). */
        rate?: number;
        progress: RunProgress;
      },
    ): Promise<TrainOutcome> {
      const t = ctx.requireTrainer();
      const startedAt = now();
      const metrics = await ppoUpdate(t, batch, {
        updates: info.updates,
        rate: info.rate,
        version: info.fromVersion,
        performance: info.performance,
        clock: now,
        onStep: (m, epoch, t0) =>
          ctx.emit({
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
      const strategy = t.strategyReport() ?? undefined;
      const switched = strategy?.switched;
      if (switched)
        ctx.emit({
          lane: 'trainer',
          kind: 'strategy',
          t0: now(),
          t1: now(),
          version: info.fromVersion,
          meta: { from: switched.from, to: switched.to, reason: switched.reason },
        });
      // Every number of the step's metrics: a restart after a publish whose answer was lost reports them.
      const published = await publishVersion(
        info.fromVersion + 1,
        info.seqs,
        info.progress,
        metricNumbers(metrics),
        strategy?.importance,
      );
      return {
        version: published.version,
        metrics,
        startedAt,
        publishedAt: published.publishedAt,
        ...(strategy ? { strategy } : {}),
      };
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
      if (current?.init.runId === runId) {
        current.channel.close();
        current = undefined;
      }
      const d = await ctx.database();
      let evicted: Eviction | null = null;
      await withEviction(
        d,
        () => setRunStatus(d, runId, status, stopped),
        (e) => (evicted = e),
      );
      return evicted;
    },
  };
}
