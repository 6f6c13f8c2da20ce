import type { EngineRunInit, RolloutApi, RolloutInit, RolloutStats } from '../../../workers/rollout.worker';
import { DEFAULT_MODEL_ARGS } from '../policy/config';
import { newBeacon, readBeacon } from '../pipeline/beacon';
import type { Pipeline } from '../pipeline/controller';
import type { Lane, TimelineEvent } from '../pipeline/events';
import type { RunSettings } from '../pipeline/run-settings';
import type { RolloutPort } from '../pipeline/types';
import { WorkerPool } from '../pipeline/worker-pool';

/** A worker's method as the main thread calls it: the same arguments, its result as a promise. */
export type Called<F> = F extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;

/** A rollout worker as the run drives it (the page's `RolloutBridge`; a fake in tests). */
export interface RolloutHost {
  /** Starts the worker, routes its timeline events to `onEvents`, and initialises it. */
  prepare(init: RolloutInit, onEvents: (events: TimelineEvent[]) => void): Promise<{ backend: string }>;
  /** Joins a pipeline run: the worker adopts the run's newest stored version and plays for its lane. */
  join(run: EngineRunInit): Promise<{ version: number }>;
  terminate(): void;
  readonly api: {
    stats: Called<RolloutApi['stats']>;
    play: RolloutPort['play'];
    abort: RolloutPort['abort'];
    debugFault: Called<RolloutApi['debugFault']>;
  };
}

/** Makes a rollout worker named `name` whose crash (uncaught error, failed load) calls `onCrash`. */
export type RolloutFactory = (name: string, onCrash: (message: string) => void) => RolloutHost;

/** A rollout worker of the pool: its host, as the pipeline's port. */
export class PooledRollout implements RolloutPort {
  /** The worker's progress counter, where memory is shared. */
  readonly beacon?: () => number;
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
  play: RolloutPort['play'] = (job) => this.host.api.play(job);
  abort: RolloutPort['abort'] = (jobId) => this.host.api.abort(jobId);
}

/** What the pool tells the run as its workers come and go. */
export interface RolloutPoolHooks {
  push(events: readonly TimelineEvent[]): void;
  /** A worker started on `backend`. */
  backend(name: string): void;
  notice(message: string): void;
  error(message: string): void;
}

/**
 * The run's rollout worker pool: it prepares a worker per lane (policy replica, sandbox, progress
 * counter), joins it to the run, adds it to the pipeline, and replaces one that crashed or hangs.
 */
export function rolloutPool(
  runId: string,
  settings: RunSettings,
  lanes: Lane[],
  pipeline: Pipeline,
  create: RolloutFactory,
  hooks: RolloutPoolHooks,
): WorkerPool<PooledRollout, RolloutStats> {
  const rows = settings.slotsPerWorker * settings.code.groupSize;
  return new WorkerPool<PooledRollout, RolloutStats>(lanes, {
    prepare: async (onCrash, giveUp) => {
      const host = create('rollout', onCrash);
      giveUp.addEventListener('abort', () => host.terminate()); // it crashed or hangs: it never answers
      const counter = newBeacon();
      try {
        const r = await host.prepare(
          { model: DEFAULT_MODEL_ARGS, seed: settings.seed, ...(counter ? { beacon: counter } : {}) },
          (events) => hooks.push(events),
        );
        hooks.backend(r.backend);
      } catch (err) {
        host.terminate();
        throw err;
      }
      return new PooledRollout(host, counter);
    },
    join: async (w, lane) => {
      await w.host.join({
        runId,
        lane,
        rows,
        interruptEveryTokens: settings.interruptEveryTokens,
        temperature: settings.code.temperature,
        seed: settings.seed * 31 + Number(lane.slice('rollout-'.length)),
        fetchAfterMs: 250,
      });
    },
    joined: (lane, w) => pipeline.addWorker(lane, w, lane),
    lost: (lane, reason) => {
      pipeline.removeWorker(lane, reason);
      hooks.notice(`${lane} ${reason}; replacing it, its episodes in flight go back to the queue.`);
    },
    emit: (e) => hooks.push([e]),
    onError: (m) => hooks.error(m),
  });
}
