import * as Comlink from 'comlink';
import type { TrainerApi, TrainerInfo, TrainerInit } from '../../../workers/trainer.worker';
import type { TimelineEvent } from '../pipeline/events';
import { WorkerBridge } from './worker-bridge';

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
    );
  }

  /** Starts (or restarts) the worker, routes its timeline events to `onEvents`, and initialises it. */
  async boot(init: TrainerInit, onEvents: (events: TimelineEvent[]) => void): Promise<TrainerInfo> {
    this.restart();
    await this.api.setEventSink(Comlink.proxy(onEvents));
    return this.api.init(init);
  }
}
