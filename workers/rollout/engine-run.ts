import * as tf from '@tensorflow/tfjs';
import { errorMessage } from '../../src/lib/errors';
import { mergedWeights } from '../../src/lib/policy/lora';
import type { Params, Weights } from '../../src/lib/policy/model';
import { adaptersFromCheckpoint, paramsFromCheckpoint, type Checkpoint } from '../../src/lib/policy/weights';
import { now, type Lane } from '../../src/lib/pipeline/events';
import { isCodeAnnounce, isVersionAnnounce, PARAMS_CHANNEL } from '../../src/lib/pipeline/params-channel';
import { LaggedVersions } from '../../src/lib/rollout/lagged-versions';
import { emptyEngineStats, RolloutEngine, type EngineStats } from '../../src/lib/rollout/rollout-engine';
import type { PlayedGroup, RolloutJob } from '../../src/lib/pipeline/types';
import type { CacheStats } from '../../src/lib/sandbox/cache';
import { withEviction } from '../../src/lib/storage/quota';
import { putTrajectories } from '../../src/lib/storage/trajectories-store';
import {
  getVersion,
  latestFullVersion,
  latestVersion,
  listVersions,
} from '../../src/lib/storage/weights-store';
import type { RolloutContext } from './context';

/** How the pipeline starts this worker's part of a run. */
export interface EngineRunInit {
  runId: string;
  /** Timeline lane of this worker (`rollout-N`). */
  lane: Lane;
  /** Episodes decoded together at most: slots × group size. */
  rows: number;
  /** Adopt a new version after this many decode steps even mid-turn (0: turn boundaries only). */
  interruptEveryTokens: number;
  /** Sampling temperature (1: the policy's own distribution). */
  temperature: number;
  seed: number;
  /** Read a version from the store when its announce has not arrived after this long, ms. */
  fetchAfterMs: number;
  /** Play version max(0, v − playLag)'s weights when version v comes (`RunConfig.playLag`). */
  playLag: number;
}

/** What the worker reports with each heartbeat. */
export interface RolloutStats extends EngineStats {
  cache: CacheStats;
  /** The sandbox that runs this worker's programs. */
  sandbox: string;
  /** Epoch ms of the reply. */
  at: number;
}

/** The pipeline run this worker plays for: its engine, announce channel and the base of LoRA versions. */
interface EngineRun {
  runId: string;
  lane: Lane;
  engine: RolloutEngine;
  channel: BroadcastChannel;
  base: Params | null;
  /** The base being read from the store: versions arriving meanwhile wait for the same one. */
  baseLoading: Promise<Params> | null;
  /** The versions a fixed lag plays from (full checkpoints, never LoRA: the settings refuse both). */
  lagged: LaggedVersions<Checkpoint>;
}

/** A checkpoint as a fixed lag keeps it: without the optimiser state, which playing never reads. */
function playable({ optimizer: _optimizer, ...weights }: Checkpoint): Checkpoint {
  return weights;
}

/** A code-writing run's rollouts: the engine over this worker's policy replica, fed each published version. */
export function engineRunHandlers(ctx: RolloutContext) {
  let run: EngineRun | undefined;

  function requireRun(): EngineRun {
    if (!run) throw new Error('no pipeline run in this worker: call startRun() first');
    return run;
  }

  /** The full version a run's LoRA version `v` was trained on, as parameters. */
  async function loadBase(runId: string, v: number): Promise<Params> {
    const full = await latestFullVersion(await ctx.database(), runId, v);
    if (!full) throw new Error(`run ${runId} has no full version to merge LoRA version ${v} into`);
    return paramsFromCheckpoint(full.checkpoint);
  }

  /** Offers a published version to the engine: full weights, or LoRA adapters merged into the run's base. */
  async function offerCheckpoint(checkpoint: Checkpoint, v: number, publishedAt: number): Promise<void> {
    const r = requireRun();
    if (v <= r.engine.latest) return;
    let weights: Weights;
    let played = v;
    if (checkpoint.lora) {
      // A store read and an announce can both get here first: they share one read (one base).
      if (!r.base) {
        const loading = (r.baseLoading ??= loadBase(r.runId, v).catch((err: unknown) => {
          r.baseLoading = null; // the next version tries again
          throw err;
        }));
        const base = await loading;
        if (run !== r) {
          // The worker left the run meanwhile (its base was freed with it): free this one too, once.
          if (r.baseLoading === loading) {
            r.baseLoading = null;
            tf.dispose([...base.values()]);
          }
          return;
        }
        r.base ??= base;
      }
      const adapters = adaptersFromCheckpoint(checkpoint);
      weights = mergedWeights(r.base, adapters, checkpoint.lora);
      tf.dispose([...adapters.values()]);
    } else {
      // With a fixed lag the engine holds version v, played with an older version's weights.
      const lagged = r.lagged.push(v, playable(checkpoint));
      played = lagged.version;
      const params = paramsFromCheckpoint(lagged.item);
      r.base = params;
      weights = params;
    }
    r.engine.offer(v, weights, publishedAt, checkpoint.model, played);
  }

  /**
   * A fixed lag's versions before the newest stored one, as far as the store still holds them (a
   * worker that joins a run late: a replacement, a resume), so that it plays η back from the start.
   */
  async function holdStoredLag(): Promise<void> {
    const r = requireRun();
    if (r.lagged.lag === 0) return;
    const db = await ctx.database();
    const versions = await listVersions(db, r.runId);
    const newest = versions.at(-1) ?? 0;
    for (const v of versions.filter((x) => x >= newest - r.lagged.lag && x < newest)) {
      const record = await getVersion(db, r.runId, v);
      if (record && !record.checkpoint.lora) r.lagged.push(v, playable(record.checkpoint));
    }
  }

  /** Adopts the newest stored version of the run when it is at least `min` (a late announce, a new worker). */
  async function adoptFromStore(min: number): Promise<void> {
    const r = requireRun();
    const record = await latestVersion(await ctx.database(), r.runId);
    if (!record || record.version < min || record.version <= r.engine.latest) return;
    await offerCheckpoint(record.checkpoint, record.version, now());
    ctx.events.mark({ lane: r.lane, kind: 'load', version: record.version, meta: { from: 'store' } });
  }

  const handlers = {
    /**
     * Joins a pipeline run: an engine over this worker's policy replica and sandbox, listening
     * for announced versions, starting from the newest stored one (a replacement or a resume).
     */
    async startRun(init: EngineRunInit): Promise<{ version: number }> {
      if (!ctx.modelArgs) throw new Error('rollout worker not initialised: call init() first');
      handlers.stopRun();
      const sb = await ctx.getSandbox();
      const lane = init.lane;
      const events = ctx.events;
      const engine = new RolloutEngine(sb, {
        args: ctx.modelArgs,
        rows: init.rows,
        interruptEveryTokens: init.interruptEveryTokens,
        temperature: init.temperature,
        seed: init.seed,
        lane,
        fetchAfterMs: init.fetchAfterMs,
        emit: (e) => events.push(e),
        persist: async (job, trajectories) => {
          const d = await ctx.database();
          const createdAt = Date.now();
          const records = trajectories.map((trajectory, i) => ({
            runId: job.runId,
            seq: job.seqBase + i,
            jobId: job.jobId,
            consumed: 0 as const,
            createdAt,
            trajectory,
          }));
          await withEviction(
            d,
            () => putTrajectories(d, records),
            (e) =>
              events.mark({ lane, kind: 'evict', version: engine.version, meta: { ...e, reason: 'quota' } }),
          );
        },
        fetch: (min) => adoptFromStore(min),
        release: (w) => {
          if (w !== run?.base) tf.dispose([...w.values()]);
        },
      });
      const channel = new BroadcastChannel(PARAMS_CHANNEL);
      const lagged = new LaggedVersions<Checkpoint>(init.playLag);
      run = { runId: init.runId, lane, engine, channel, base: null, baseLoading: null, lagged };
      channel.onmessage = (ev: MessageEvent<unknown>) => {
        const d = ev.data;
        if (!isVersionAnnounce(d) || d.runId !== run?.runId || !isCodeAnnounce(d)) return;
        offerCheckpoint(d.checkpoint, d.version, d.publishedAt).catch((err: unknown) =>
          events.mark({
            lane,
            kind: 'error',
            version: d.version,
            meta: { message: errorMessage(err) },
          }),
        );
      };
      await holdStoredLag();
      await adoptFromStore(0);
      return { version: engine.version };
    },

    /** Plays a job of the run (resolves once its trajectories are stored). */
    play(job: RolloutJob): Promise<PlayedGroup> {
      return requireRun().engine.play(job);
    },

    /** Drops a job (a stop; with `keep`, a preemption that keeps what it played). */
    abort(jobId: number, keep = false): void {
      run?.engine.abort(jobId, keep);
    },

    /** The heartbeat: engine counters and the result cache's hit rate. */
    async stats(): Promise<RolloutStats> {
      const sb = await ctx.getSandbox();
      const e = run?.engine.stats ?? ctx.customStats?.() ?? emptyEngineStats();
      return { ...e, cache: sb.cache.stats, sandbox: sb.kind, at: now() };
    },

    /** Leaves the run: running jobs end as aborted, the channel closes. */
    stopRun(): void {
      if (!run) return;
      run.channel.close();
      run.engine.dispose();
      run.lagged.clear();
      if (run.base) tf.dispose([...run.base.values()]);
      run = undefined;
      ctx.events.flush();
    },
  };
  return handlers;
}
