import * as Comlink from 'comlink';
import type { EngineRunInit, RolloutApi, RolloutInit } from '../../../workers/rollout.worker';
import type { TimelineEvent } from '../pipeline/events';
import { WorkerBridge } from './worker-bridge';

/** The main thread's one handle on a rollout worker (policy replica + QuickJS sandbox). */
export class RolloutBridge extends WorkerBridge<RolloutApi> {
  constructor(name = 'rollout-0', onCrash?: (message: string) => void) {
    super(
      () =>
        new Worker(new URL('../../../workers/rollout.worker.ts', import.meta.url), {
          type: 'module',
          name,
        }),
      onCrash,
    );
  }

  /**
   * Starts the worker for a pipeline run: initialises its policy replica and sandbox, routes its
   * timeline events to `onEvents`, and joins the run (it adopts the newest stored version).
   */
  async join(
    init: RolloutInit,
    run: EngineRunInit,
    onEvents: (events: TimelineEvent[]) => void,
  ): Promise<{ backend: string; version: number }> {
    this.start();
    await this.api.setEventSink(Comlink.proxy(onEvents));
    const report = await this.api.init(init);
    const { version } = await this.api.startRun(run);
    return { backend: report.backend, version };
  }
}
