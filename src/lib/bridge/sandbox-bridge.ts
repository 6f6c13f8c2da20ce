import * as Comlink from 'comlink';
import type { SandboxApi } from '../../../workers/sandbox.worker';
import type { SandboxRequest, SandboxResult } from '../sandbox/types';
import { WorkerBridge, type BridgeOptions } from './worker-bridge';

/**
 * How long the sandbox worker has to answer one call, ms. The sandbox stops a program at its
 * deadline (10 s at most), so a worker silent past this is stuck.
 */
export const SANDBOX_ANSWER_MS = 15_000;

/** Limits of the sandbox worker's calls: the test and bench batches take as long as their runs. */
export const SANDBOX_LIMITS: BridgeOptions<SandboxApi> = {
  name: 'the sandbox worker',
  timeoutMs: SANDBOX_ANSWER_MS,
  methodTimeouts: { contract: null, soak: null, runBatch: null, timeoutOvershoot: null },
};

/** The main thread's one handle on the sandbox worker behind the page's sandbox panel. */
export class SandboxBridge extends WorkerBridge<SandboxApi> {
  constructor(onCrash?: (message: string) => void) {
    super(
      () =>
        new Worker(new URL('../../../workers/sandbox.worker.ts', import.meta.url), {
          type: 'module',
          name: 'sandbox',
        }),
      onCrash,
      SANDBOX_LIMITS,
    );
  }

  /** Lets the worker reach the main thread's WebContainer sandbox through a comlink proxy. */
  attachWebContainer(run: (req: SandboxRequest) => Promise<SandboxResult>): Promise<void> {
    return this.api.attachWebContainer(Comlink.proxy(run));
  }
}
