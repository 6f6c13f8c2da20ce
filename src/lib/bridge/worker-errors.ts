/**
 * Why a call to a worker through its bridge failed without an answer. A bridge rejects every call
 * in flight with one of these: a dead, stopped or silent worker never answers on its own.
 */

/** The worker threw an uncaught error, failed to load, or sent a message that could not be read. */
export class WorkerCrashed extends Error {
  override readonly name = 'WorkerCrashed';
  constructor(
    /** What the worker's error said. */
    readonly workerMessage: string,
    /** Which worker, as the message names it ("the trainer worker"). */
    readonly worker = 'the worker',
  ) {
    super(`${worker} crashed: ${workerMessage}`);
  }
}

/** The worker was terminated (or restarted) by its owner before it answered. */
export class WorkerTerminated extends Error {
  override readonly name = 'WorkerTerminated';
  constructor(
    readonly worker = 'the worker',
    /** Ended by a restart (a new worker took its place). */
    readonly restarted = false,
  ) {
    super(`${worker} was ${restarted ? 'restarted' : 'terminated'} before it answered`);
  }
}

/** The worker did not answer one call within its limit (it may hang, or be far slower than expected). */
export class WorkerTimeout extends Error {
  override readonly name = 'WorkerTimeout';
  constructor(
    /** The API method that was called. */
    readonly method: string,
    /** The call's limit, ms. */
    readonly limitMs: number,
    readonly worker = 'the worker',
  ) {
    super(`${worker} did not answer ${method}() within ${limitMs} ms`);
  }
}
