import { checkpointFromText } from './checkpoint-file';
import type { Checkpoint } from './weights';

/**
 * Policies that ship with the page, to start a run from as AReaL starts from a pre-trained model.
 * Each file is a `checkpoint-file` the node staleness bench saved (`--save`); the command that
 * makes it is in docs/experiments.md.
 */
export const BUILT_IN_BASES = {
  'easy-half': {
    label: 'built-in base: half the easy tasks solved',
    about:
      'seed 1 trained synchronously on the easy level until greedy play solved half its training tasks (375 versions): past the constant programs',
    url: new URL('./bases/easy-half.json', import.meta.url).href,
  },
  'tooluse-revise': {
    label: 'built-in base: runs its guess, reads the report, revises (tool use)',
    about:
      'seed 1 taught by imitation on the easy tool-use training tasks and wide made-up functions (none equal to a held-out task): a first guess through the shown example, its report, then the right program',
    url: new URL('./bases/tooluse-revise.json', import.meta.url).href,
  },
  'tooluse-revise-copy': {
    label: 'built-in base: revises, with a copy head (tool use; not a stock GPT-2)',
    about:
      'as the revising base, with the copy (pointer) head that can write a number it reads in the report: it revises more often; a policy with that head exports to no stock GPT-2',
    url: new URL('./bases/tooluse-revise-copy.json', import.meta.url).href,
  },
} as const;

export type BuiltInBase = keyof typeof BUILT_IN_BASES;

export const isBuiltInBase = (v: unknown): v is BuiltInBase =>
  typeof v === 'string' && Object.hasOwn(BUILT_IN_BASES, v);

/** Fetches a built-in base's weights (from the page's own assets). */
export async function loadBuiltInBase(base: BuiltInBase): Promise<Checkpoint> {
  const { url } = BUILT_IN_BASES[base];
  const res = await fetch(url);
  if (!res.ok) throw new Error(`the built-in base ${base} could not be loaded (HTTP ${res.status})`);
  return checkpointFromText(await res.text(), `the built-in base ${base}`);
}
