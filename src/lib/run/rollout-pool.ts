import type { EngineRunInit, RolloutApi, RolloutInit, RolloutStats } from '../../../workers/rollout.worker';
import { DEFAULT_MODEL_ARGS } from '../policy/config';
import { newBeacon, readBeacon } from '../pipeline/beacon';
import type { Lane, TimelineEvent } from '../pipeline/events';
import type { RunConfig } from '../config/run-config';
import type { EpisodeOutcome, RolloutPort } from '../pipeline/types';
import { WorkerPool, type PoolConfig } from '../pipeline/worker-pool';
import type { Trajectory } from '../rl/trajectory';

/** A worker's method as the main thread calls it: the same arguments, its result as a promise. */
export type Called<F> = F extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;

/** A rollout worker as the run drives it (the page's `RolloutBridge`; a fake in tests). */
export interface RolloutHost {
  /** Starts the worker, routes its timeline events to `onEvents`, and initialises it. */
  prepare(init: RolloutInit, onEvents: (events: TimelineEvent[]) => void): Promise<{ backend: string }>;
  /** Joins a code run: the worker adopts the run's newest stored version and plays for its lane. */
  join(run: EngineRunInit): Promise<{ version: number }>;
  terminate(): void;
  readonly api: {
    stats: Called<RolloutApi['stats']>;
    play: RolloutPort['play'];
    abort: RolloutPort['abort'];
    debugFault: Called<RolloutApi['debugFault']>;
    /** Joins a custom environment's training (its `join`). */
    startCustom: Called<RolloutApi['startCustom']>;
    playCustom: Called<RolloutApi['playCustom']>;
    abortCustom: Called<RolloutApi['abortCustom']>;
  };
}

/** Makes a rollout worker named `name` whose crash (uncaught error, failed load) calls `onCrash`. */
export type RolloutFactory = (name: string, onCrash: (message: string) => void) => RolloutHost;

/**
 * What a run's pool workers play: how a prepared worker joins the run for a lane, and how the
 * pipeline reaches it there. A code run's and a custom environment's differ only in these.
 */
export interface PoolWorkload<T extends EpisodeOutcome> {
  /** The workers' name (the browser's, for its tools and the tests). */
  name: string;
  /** Seed of a worker's untrained policy replica and sampling. */
  seed: number;
  join(host: RolloutHost, lane: Lane): Promise<unknown>;
  port(host: RolloutHost, lane: Lane): RolloutPort<T>;
}

/** A code run's workload: the worker's engine plays its jobs (`startRun`, `play`). */
export function codePoolWorkload(runId: string, settings: RunConfig): PoolWorkload<Trajectory> {
  const rows = settings.pipeline.slotsPerWorker * settings.learner.groupSize;
  return {
    name: 'rollout',
    seed: settings.seed,
    join: (host, lane) =>
      host.join({
        runId,
        lane,
        rows,
        interruptEveryTokens: settings.pipeline.interruptEveryTokens,
        temperature: settings.policy.temperature,
        seed: settings.seed * 31 + Number(lane.slice('rollout-'.length)),
        fetchAfterMs: 250,
        playLag: settings.pipeline.playLag,
      }),
    port: (host) => ({
      play: (job) => host.api.play(job),
      abort: (jobId, keep) => host.api.abort(jobId, keep),
    }),
  };
}

/** A rollout worker of the pool: its host, as the pipeline's port. */
export class PooledRollout<T extends EpisodeOutcome = Trajectory> implements RolloutPort<T> {
  /** The worker's progress counter, where memory is shared. */
  readonly beacon?: () => number;
  /** How the pipeline reaches it (set once it joined a lane). */
  port: RolloutPort<T> | null = null;
  constructor(
    readonly host: RolloutHost,
    counter: SharedArrayBuffer | null,
  ) {
    if (counter) this.beacon = () => readBeacon(counter);
  }
  ping(): Promise<RolloutStats> {
    return this.host.api.stats();
  }
  terminate(): void {
    this.host.terminate();
  }
  play: RolloutPort<T>['play'] = (job) => {
    if (!this.port) return Promise.reject(new Error('the rollout worker has not joined the run'));
    return this.port.play(job);
  };
  abort: RolloutPort<T>['abort'] = async (jobId, keep) => this.port?.abort(jobId, keep);
}

/** What the pool tells the run as its workers come and go. */
export interface RolloutPoolHooks {
  push(events: readonly TimelineEvent[]): void;
  /** A worker started on `backend`. */
  backend(name: string): void;
  notice(message: string): void;
  error(message: string): void;
}

/** The pipeline as the pool feeds it: workers join and leave their lanes. */
export interface PoolPipeline<T extends EpisodeOutcome> {
  addWorker(id: string, port: RolloutPort<T>, lane: Lane): void;
  removeWorker(id: string, reason: string): void;
}

/**
 * The run's rollout worker pool: it prepares a worker per lane (policy replica, sandbox, progress
 * counter), joins it to the run (as `workload` says), adds it to the pipeline, and replaces one
 * that crashed or hangs. A code run's and a custom environment's training share it.
 */
export function rolloutPool<T extends EpisodeOutcome>(
  lanes: Lane[],
  pipeline: PoolPipeline<T>,
  workload: PoolWorkload<T>,
  create: RolloutFactory,
  hooks: RolloutPoolHooks,
  config?: PoolConfig,
): WorkerPool<PooledRollout<T>, RolloutStats> {
  return new WorkerPool<PooledRollout<T>, RolloutStats>(
    lanes,
    {
      prepare: async (onCrash, giveUp) => {
        const host = create(workload.name, onCrash);
        giveUp.addEventListener('abort', () => host.terminate()); // it crashed or hangs: it never answers
        const counter = newBeacon();
        try {
          const r = await host.prepare(
            { model: DEFAULT_MODEL_ARGS, seed: workload.seed, ...(counter ? { beacon: counter } : {}) },
            (events) => hooks.push(events),
          );
          hooks.backend(r.backend);
        } catch (err) {
          host.terminate();
          throw err;
        }
        return new PooledRollout<T>(host, counter);
      },
      join: async (w, lane) => {
        await workload.join(w.host, lane);
        w.port = workload.port(w.host, lane);
      },
      joined: (lane, w) => pipeline.addWorker(lane, w, lane),
      lost: (lane, reason) => {
        pipeline.removeWorker(lane, reason);
        hooks.notice(`${lane} ${reason}; replacing it, its episodes in flight go back to the queue.`);
      },
      emit: (e) => hooks.push([e]),
      onError: (m) => hooks.error(m),
    },
    config,
  );
}
