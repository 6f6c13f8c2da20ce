import type { RolloutApi } from '../../../workers/rollout.worker';
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
}
