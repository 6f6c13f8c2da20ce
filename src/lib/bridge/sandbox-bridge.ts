import * as Comlink from 'comlink';
import type { SandboxApi } from '../../../workers/sandbox.worker';
import type { SandboxRequest, SandboxResult } from '../sandbox/types';
import { WorkerBridge } from './worker-bridge';

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
    );
  }

  /** Lets the worker reach the main thread's WebContainer sandbox through a comlink proxy. */
  attachWebContainer(run: (req: SandboxRequest) => Promise<SandboxResult>): Promise<void> {
    return this.api.attachWebContainer(Comlink.proxy(run));
  }
}
