import * as Comlink from 'comlink';
import type { EngineRunInit, RolloutApi, RolloutInit } from '../../../workers/rollout.worker';
import type { TimelineEvent } from '../pipeline/events';
import { WorkerBridge, type BridgeOptions } from './worker-bridge';

/**
 * Limits of a rollout worker's calls: a minute for an answer (the default), two to start (a tfjs
 * backend and QuickJS load), and none for what plays episodes for as long as it is asked to (an
 * evaluation of a whole suite, a job of the pipeline, whose pool watches heartbeats instead).
 */
export const ROLLOUT_LIMITS: BridgeOptions<RolloutApi> = {
  methodTimeouts: {
    init: 120_000,
    evaluate: null,
    play: null,
    playCustom: null,
    customReturn: null,
    customRandomReturn: null,
    openCustomEnv: null,
  },
};

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
      { ...ROLLOUT_LIMITS, name: `the ${name} worker` },
    );
  }

  /**
   * Starts the worker and initialises its policy replica and sandbox, routing its timeline
   * events to `onEvents` (a pool's spare stops here until it takes a lane).
   */
  async prepare(
    init: RolloutInit,
    onEvents: (events: TimelineEvent[]) => void,
  ): Promise<{ backend: string }> {
    this.start();
    await this.api.setEventSink(Comlink.proxy(onEvents));
    const report = await this.api.init(init);
    return { backend: report.backend };
  }

  /** Joins a pipeline run: the worker adopts the run's newest stored version and plays for its lane. */
  async join(run: EngineRunInit): Promise<{ version: number }> {
    return this.api.startRun(run);
  }
}
