import * as tf from '@tensorflow/tfjs';
import { tryProgram, type TryResult } from '../../src/lib/env/try-program';
import type { Task } from '../../src/lib/env/suite';
import { selectBackend, type BackendName, type BackendReport } from '../../src/lib/policy/backend';
import type { ModelArgs } from '../../src/lib/policy/config';
import { initParams } from '../../src/lib/policy/model';
import { alive, useBeacon } from '../../src/lib/pipeline/beacon';
import type { TimelineEvent } from '../../src/lib/pipeline/events';
import { injectFault } from '../fault';
import { initBackend } from '../tfjs-backends';
import type { RolloutContext } from './context';

/** How the page starts a rollout worker. */
export interface RolloutInit {
  /** Backends to try for inference, best first (default: wasm → webgl → cpu; DESIGN §2). */
  backends?: BackendName[];
  model: ModelArgs;
  /** Seed of the untrained policy's weights and of sampling. */
  seed: number;
  /** The progress counter this worker bumps as it works (`beacon.ts`), where memory is shared. */
  beacon?: SharedArrayBuffer;
}

export const DEFAULT_ROLLOUT_BACKENDS: BackendName[] = ['wasm', 'webgl', 'cpu'];

/** The worker itself: backend and untrained policy, the beacon, the timeline sink, faults, "try". */
export function setupHandlers(ctx: RolloutContext) {
  /** Bumps the progress counter while the event loop turns (set once the page gives a counter). */
  let beaconTimer: ReturnType<typeof setInterval> | undefined;

  return {
    /** Selects the inference backend and builds the untrained policy. */
    async init(opts: RolloutInit): Promise<BackendReport & { parameters: number }> {
      if (opts.beacon && !beaconTimer) {
        useBeacon(opts.beacon);
        // Idle or between jobs, the event loop turns: bump the counter then too.
        beaconTimer = setInterval(alive, 50);
      }
      const report = await selectBackend(opts.backends ?? DEFAULT_ROLLOUT_BACKENDS, initBackend);
      if (ctx.untrained) tf.dispose([...ctx.untrained.values()]);
      const untrained = initParams(opts.model, opts.seed);
      ctx.untrained = untrained;
      ctx.modelArgs = opts.model;
      ctx.untrainedArgs = opts.model;
      await ctx.getSandbox();
      const parameters = [...untrained.values()].reduce((n, v) => n + v.size, 0);
      return { ...report, parameters };
    },

    /**
     * Fault injection for tests (`?debug`): `crash` throws an uncaught error and closes the
     * worker, `hang` blocks its thread forever, `exit` closes it silently.
     */
    debugFault(kind: 'crash' | 'hang' | 'exit'): void {
      injectFault(kind);
    },

    /** Registers the callback that receives timeline events in batches (pass it through `Comlink.proxy`). */
    setEventSink(callback: (batch: TimelineEvent[]) => void): void {
      ctx.events.sink = callback;
    },

    /** Runs `(x) => (program)` on a task's examples and hidden tests (the task editor's "try"). */
    async tryProgram(task: Task, program: string): Promise<TryResult> {
      return tryProgram(await ctx.getSandbox(), task, program);
    },
  };
}
