import * as Comlink from 'comlink';
import type { RolloutApi } from '../../../workers/rollout.worker';
import type { TrainerApi } from '../../../workers/trainer.worker';
import type { CustomEnvSpec } from '../custom/env';
import type { PipelineCounters } from '../pipeline/controller';
import type { CustomTrajectory } from '../custom/workload';
import type { Lane, TimelineEvent } from '../pipeline/events';
import type { PipelineTrainerPort, RolloutPort, RunProgress } from '../pipeline/types';
import type { CustomTrainConfig } from '../custom/config';
import type { CustomBatch } from '../custom/trainer';
import { evictionNotice } from '../storage/quota';
import { count } from '../plural';
import type { PoolWorkload, RolloutHost } from './rollout-pool';

// How a custom-environment training reaches its workers: the pool's rollout workers join it and
// play its jobs, the trainer updates, stores and announces each version (as a code run's), and
// the measuring worker measures the baselines and the trained policy.

/** The methods `K` of a worker's `Api` as the page calls them (a bridge's remote): each gives a promise. */
type Calls<Api, K extends keyof Api> = {
  [P in K]: Api[P] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};

/** The worker that measures a training's returns (`RolloutBridge` in the page). */
export interface CustomMeasurer {
  readonly api: Calls<
    RolloutApi,
    'openCustomEnv' | 'customRandomReturn' | 'adoptStoredCustom' | 'customReturn'
  >;
  terminate(): void;
}

/** What a custom training calls on the trainer worker (`TrainerState.api` in the page). */
export type CustomTrainerApi = Calls<
  TrainerApi,
  'initCustom' | 'resumeCustom' | 'publishCustom' | 'trainAndPublishCustom' | 'stats'
>;

export type Emit = (e: TimelineEvent) => void;

/** A pool worker as the pipeline's port for a custom training; its groups go on its lane of the timeline. */
export function customRolloutPort(
  host: RolloutHost,
  lane: Lane,
  yieldEvery: number,
  emit: Emit,
): RolloutPort<CustomTrajectory> {
  return {
    play: async (job) => {
      const group = await host.api.playCustom(job, yieldEvery);
      if (group.status !== 'done') return group;
      const returns = group.trajectories.map((t) => t.return);
      emit({
        lane,
        kind: 'episode',
        t0: group.startedAt,
        t1: group.endedAt,
        version: group.oldestVersion,
        meta: {
          job: job.jobId,
          episodes: returns.length,
          newest: group.newestVersion,
          meanReturn: Number((returns.reduce((a, b) => a + b, 0) / Math.max(1, returns.length)).toFixed(2)),
        },
      });
      for (const t of group.trajectories)
        for (const a of t.adoptions)
          emit({ lane, kind: 'interrupt', t0: a.at, t1: a.at, version: a.version, meta: { job: job.jobId } });
      return group;
    },
    abort: (jobId) => host.api.abortCustom(jobId),
  };
}

/**
 * A custom training's workload for the rollout pool: a worker joins by opening the environment
 * (lane `rollout-i` on seed `seed + i`) and adopting the newest stored version, then plays its jobs.
 */
export function customPoolWorkload(
  runId: string,
  training: { config: CustomTrainConfig; code: string; seed: number },
  emit: Emit,
): PoolWorkload<CustomTrajectory> {
  return {
    name: 'rollout-custom',
    seed: training.config.seed,
    join: (host, lane) =>
      host.api.startCustom({
        runId,
        lane,
        code: training.code,
        seed: training.seed + Number(lane.slice('rollout-'.length)),
        fetchAfterMs: 250,
      }),
    port: (host, lane) => customRolloutPort(host, lane, training.config.yieldEvery, emit),
  };
}

/** The trainer as a custom training's pipeline reaches it: one update, then the version stored and announced. */
export function customTrainerPort(
  api: CustomTrainerApi,
  progress: () => RunProgress,
): PipelineTrainerPort<CustomBatch> {
  return {
    trainAndPublish: (batch, info) => {
      const buffers = [batch.obs, batch.actions, batch.returns, batch.behavLogp].map((a) => a.buffer);
      return api.trainAndPublishCustom(Comlink.transfer(batch, buffers), {
        fromVersion: info.fromVersion,
        progress: progress(),
      });
    },
  };
}

/** How the trainer stores a training (its name, config and retention), and the MLP's shape for the environment. */
export function customRunInit(
  runId: string,
  start: { config: CustomTrainConfig; code: string },
  spec: CustomEnvSpec,
) {
  const { config, code } = start;
  const { keepVersions, milestoneEvery } = config;
  const name = `custom environment, η ${config.eta}, ${count(config.workers, 'worker')}`;
  return {
    init: { runId, name, config: { ...config, code }, keepVersions, milestoneEvery },
    mlp: { inputs: spec.observations, hidden: config.hidden, actions: spec.actions },
  };
}

/** What the page says of a mark that the store evicted old data to make room for `what` (null: no such mark). */
export function quotaNotice(e: TimelineEvent, what: string): string | null {
  if (e.kind !== 'evict' || e.meta?.reason !== 'quota') return null;
  const n = (k: string) => Number(e.meta?.[k] ?? 0);
  return evictionNotice(
    { trajectories: n('trajectories'), versions: n('versions'), events: n('events') },
    what,
  );
}

/** A copy of a pipeline's counters for the panel. */
export function countersOf(c: PipelineCounters): PipelineCounters {
  return { ...c, stalenessHistogram: { ...c.stalenessHistogram } };
}

/** The baselines a training reports: measured at its start, or stored by the training it resumes. */
export interface Baselines {
  spec: CustomEnvSpec;
  randomReturn: number;
  untrainedReturn: number | null;
}

/**
 * The seed of the measuring worker's environment; the pool's lane i plays on this + i. A resume's
 * environments and sampling go on from other seeds than its first part's.
 */
export function customEnvSeed(
  start: { config: CustomTrainConfig } & ({ kind: 'new' } | { kind: 'resume'; from: number }),
): number {
  return start.config.seed + (start.kind === 'resume' ? start.from * start.config.workers : 0);
}
