/// <reference lib="webworker" />

/**
 * Fault injection for tests (`?debug`): `crash` throws an uncaught error and closes the worker,
 * `hang` blocks its thread forever, `exit` closes it silently.
 */
export function injectFault(kind: 'crash' | 'hang' | 'exit'): void {
  if (kind === 'crash') {
    setTimeout(() => {
      setTimeout(() => self.close(), 0);
      throw new Error('injected crash (debug fault)');
    }, 0);
  } else if (kind === 'hang') {
    setTimeout(() => {
      for (;;) {
        /* a hung worker: the heartbeat stops */
      }
    }, 0);
  } else {
    self.close();
  }
}
