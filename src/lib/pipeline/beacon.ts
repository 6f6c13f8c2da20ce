/**
 * A worker's sign of life that needs no message: a counter in shared memory that the worker bumps
 * as it works (each decode step, each sandbox step, every 50 ms while idle) and that the main
 * thread reads when it checks for a hang. A heartbeat message waits for the worker's event loop
 * and then for the main thread's, so a healthy worker deep in a decode step, or a main thread busy
 * drawing, looks silent; the counter shows the worker's progress as it happens. A worker in an
 * endless loop stops bumping it.
 */

/** This worker's counter (unset on the main thread, in node tests, and where memory is not shared). */
let cell: Int32Array | null = null;

/** A new counter for one worker, or null where memory cannot be shared (a page not cross-origin isolated). */
export function newBeacon(): SharedArrayBuffer | null {
  if (typeof SharedArrayBuffer !== 'function') return null;
  if ((globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === false) return null;
  return new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
}

/** The counter's value (main thread). */
export function readBeacon(buffer: SharedArrayBuffer): number {
  return Atomics.load(new Int32Array(buffer), 0);
}

/** Makes `buffer` this worker's counter (worker side). */
export function useBeacon(buffer: SharedArrayBuffer): void {
  cell = new Int32Array(buffer);
}

/** Bumps this worker's counter: it is working (a no-op without one). */
export function alive(): void {
  if (cell) Atomics.add(cell, 0, 1);
}
