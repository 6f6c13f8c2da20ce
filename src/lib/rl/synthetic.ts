import { BOS, PAD, SUBMIT, tokenId } from '../env/vocab';
import type { TokenBatch } from './batch';
import { Rng } from '../random';

/** Programs the foundation's training step imitates until the code-writing env exists. */
export const IMITATION_PROGRAMS = ['x*2+1', '(x+3)*2', 'x*x+1', 'x%3', '7', 'x-4'];

/**
 * A batch that rewards writing one of `IMITATION_PROGRAMS` (advantage 1 on each of its tokens):
 * `<bos> program <submit> <pad>…`, masked to the program and `<submit>` positions. It exercises
 * the full gradient path of the policy, and its loss falls as the policy learns the programs.
 */
export function imitationBatch(batch: number, length: number, seed: number): TokenBatch {
  const rng = new Rng(seed);
  const n = batch * length;
  const out: TokenBatch = {
    batch,
    length,
    tokens: new Int32Array(n).fill(PAD),
    actions: new Int32Array(n).fill(PAD),
    mask: new Float32Array(n),
    advantages: new Float32Array(n),
    returns: new Float32Array(n),
  };
  for (let b = 0; b < batch; b++) {
    const program = rng.pick(IMITATION_PROGRAMS);
    const seq = [BOS, ...[...program].map(tokenId), SUBMIT].slice(0, length + 1);
    for (let t = 0; t < seq.length - 1; t++) {
      const i = b * length + t;
      out.tokens[i] = seq[t] ?? PAD;
      out.actions[i] = seq[t + 1] ?? PAD;
      out.mask[i] = 1;
      out.advantages[i] = 1;
      out.returns[i] = 1;
    }
    const last = seq.length - 1;
    if (last < length) out.tokens[b * length + last] = seq[last] ?? PAD;
  }
  return out;
}
