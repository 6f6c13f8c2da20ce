/**
 * The URL parameter that carries shared settings (`?run=…`, `share-link.ts`): what the page looks
 * for as it opens, apart from the code that reads a link (a chunk of its own).
 */
export const SHARE_PARAM = 'run';
