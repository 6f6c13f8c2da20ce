import * as Comlink from 'comlink';
import type { RolloutApi } from '../../../workers/rollout.worker';
import type { TrainerApi } from '../../../workers/trainer.worker';
import type { CustomTrajectory } from '../pipeline/custom-workload';
import { now, type Lane, type TimelineEvent } from '../pipeline/events';
import type { RolloutPort, TrainOutcome } from '../pipeline/types';
import { metricNumbers } from '../policy/metrics';
import type { CustomBatch } from '../rl/custom-trainer';
import type { RunProgress } from '../storage/db';
import { evictionNotice } from '../storage/quota';

// How a custom-environment training moves its policy: the trainer updates and stores each
// version, and the page sends it on to every rollout worker, which adopts it at its next yield.

/** The methods `K` of a worker's `Api` as the page calls them (a bridge's remote): each gives a promise. */
type Calls<Api, K extends keyof Api> = {
  [P in K]: Api[P] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};

/** What a custom training calls on a rollout worker (`RolloutBridge` in the page). */
export interface CustomRolloutBridge {
  readonly api: Calls<
    RolloutApi,
    'openCustomEnv' | 'customReturn' | 'loadCustomPolicy' | 'playCustom' | 'abortCustom'
  >;
  terminate(): void;
}

/** What a custom training calls on the trainer worker (`TrainerState.api` in the page). */
export type CustomTrainerApi = Calls<
  TrainerApi,
  'initCustom' | 'resumeCustom' | 'exportCustomPolicy' | 'trainCustom' | 'publishCustom' | 'stats'
>;

export type Emit = (e: TimelineEvent) => void;

/** A rollout worker as the pipeline's port; its groups go on its lane of the timeline. */
export function customRolloutPort(
  bridge: CustomRolloutBridge,
  lane: Lane,
  yieldEvery: number,
  emit: Emit,
): RolloutPort<CustomTrajectory> {
  return {
    play: async (job) => {
      const group = await bridge.api.playCustom(job, yieldEvery);
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
    abort: (jobId) => bridge.api.abortCustom(jobId),
  };
}

/** The trainer's side of a custom training: updates, and versions published to the rollout workers. */
export class CustomPublisher {
  constructor(
    private readonly trainer: CustomTrainerApi,
    private readonly bridges: readonly CustomRolloutBridge[],
    private readonly emit: Emit,
    /** Something the page should say (the store evicted old data to make room). */
    private readonly notice: (text: string) => void,
  ) {}

  /** The pipeline's training step: one update of the MLP, then the next version published. */
  async trainAndPublish(
    batch: CustomBatch,
    fromVersion: number,
    progress: () => RunProgress,
  ): Promise<TrainOutcome> {
    const t0 = now();
    const buffers = [batch.obs, batch.actions, batch.returns, batch.behavLogp].map((a) => a.buffer);
    const metrics = await this.trainer.trainCustom(Comlink.transfer(batch, buffers));
    this.emit({
      lane: 'trainer',
      kind: 'train-step',
      t0,
      t1: now(),
      version: fromVersion,
      meta: { loss: Number(metrics.loss.toFixed(4)), steps: batch.steps },
    });
    const version = fromVersion + 1;
    await this.publish(version, metricNumbers(metrics), progress());
    return { version, metrics, startedAt: t0, publishedAt: now() };
  }

  /**
   * Stores the trainer's weights as `version` (durable first), then sends them to every rollout
   * worker; each adopts it at its next yield (an adopt mark on its lane). Returns the adoptions,
   * for a caller that must wait for them.
   */
  async publish(
    version: number,
    metrics: Record<string, number>,
    progress: RunProgress,
  ): Promise<Promise<void>[]> {
    const t0 = now();
    const { snapshot, evicted } = await this.trainer.publishCustom(version, metrics, progress);
    const t1 = now();
    if (evicted) this.notice(evictionNotice(evicted, "the training's new version"));
    this.emit({ lane: 'store', kind: 'publish', t0, t1, version });
    return this.bridges.map((b, i) =>
      b.api.loadCustomPolicy(snapshot, version).then(
        () => this.emit({ lane: `rollout-${i}`, kind: 'adopt', t0: t1, t1: now(), version }),
        () => undefined, // a worker that died meanwhile: its crash handler ends the training
      ),
    );
  }
}
