import * as Comlink from 'comlink';
import type { TrainerApi, TrainerInfo, TrainerInit } from '../../../workers/trainer.worker';
import type { TimelineEvent } from '../pipeline/events';
import { WorkerBridge, type BridgeOptions } from './worker-bridge';

/**
 * Limits of the trainer's calls: a minute for an answer (the default, the pipeline's heartbeat
 * bound), two to start (a backend, shader compilation), and none for training steps, which take
 * as long as the model and backend need (the pipeline's heartbeat watches those).
 */
export const TRAINER_LIMITS: BridgeOptions<TrainerApi> = {
  name: 'the trainer worker',
  methodTimeouts: { init: 120_000, train: null, trainAndPublish: null, trainAndPublishCustom: null },
};

/** The main thread's one handle on the trainer worker. */
export class TrainerBridge extends WorkerBridge<TrainerApi> {
  constructor(onCrash?: (message: string) => void) {
    super(
      () =>
        new Worker(new URL('../../../workers/trainer.worker.ts', import.meta.url), {
          type: 'module',
          name: 'trainer',
        }),
      onCrash,
      TRAINER_LIMITS,
    );
  }

  /** Starts (or restarts) the worker, routes its timeline events to `onEvents`, and initialises it. */
  async boot(init: TrainerInit, onEvents: (events: TimelineEvent[]) => void): Promise<TrainerInfo> {
    this.restart();
    await this.api.setEventSink(Comlink.proxy(onEvents));
    return this.api.init(init);
  }
}
