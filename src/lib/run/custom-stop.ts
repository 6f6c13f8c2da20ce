/**
 * How a custom training ends early: what its run (`custom-run`, in the page's main bundle) and its
 * session (`custom-session`, a chunk of its own) both know.
 */

/** What "Stop now" rejects the training's waits with (not a failure: the user ended it). */
export const STOPPED_NOW = new Error('stopped at once');
/** The notice of a training stopped before its first update. */
export const STOPPED_EARLY = 'Stopped before the first update: nothing was trained.';
