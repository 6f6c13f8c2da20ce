import { VOCAB_SIZE } from '../env/vocab';

/** Shape of the decoder-only transformer policy (DESIGN §4). Carried in every checkpoint. */
export interface ModelArgs {
  /** Number of distinct tokens (program, control and observation tokens). */
  vocabSize: number;
  /** Longest token sequence the model attends over; positions are learned embeddings. */
  contextLength: number;
  /** Width of the residual stream. */
  dModel: number;
  /** Number of transformer blocks. */
  nLayers: number;
  /** Attention heads per block; `dModel` must be divisible by it. */
  nHeads: number;
  /** Hidden width of each block's MLP (conventionally 4·dModel). */
  dMlp: number;
  /**
   * Width of the copy (pointer) head's queries and keys; 0 or absent: no copy head. With one,
   * the next-token distribution mixes the vocabulary head with attention over the context's
   * tokens (pointer-generator), so a digit shown in the examples can be written back by where it
   * stands rather than by which digit it is.
   */
  pointerDim?: number;
  /**
   * True: the vocabulary head is the token embedding transposed (logits = h · tok_embᵀ), so the
   * model has no `head.w` and V·D fewer parameters. Absent or false: a head of its own.
   */
  tieEmbeddings?: boolean;
}

/** The default policy: small enough to train in a browser tab, on WebGPU or in software. */
export const DEFAULT_MODEL_ARGS: ModelArgs = {
  vocabSize: VOCAB_SIZE,
  contextLength: 64,
  dModel: 64,
  nLayers: 2,
  nHeads: 4,
  dMlp: 256,
};

/** Throws with a readable message when `args` cannot describe a model. */
export function validateModelArgs(args: ModelArgs): void {
  for (const [k, v] of Object.entries(args)) {
    if ((k === 'pointerDim' || k === 'tieEmbeddings') && v === undefined) continue;
    if (k === 'tieEmbeddings') {
      if (typeof v !== 'boolean') throw new Error(`model arg tieEmbeddings must be true or false, got ${v}`);
      continue;
    }
    const min = k === 'pointerDim' ? 0 : 1;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min)
      throw new Error(
        `model arg ${k} must be a ${k === 'pointerDim' ? 'non-negative' : 'positive'} integer, got ${v}`,
      );
  }
  if (args.dModel % args.nHeads !== 0) {
    throw new Error(`dModel (${args.dModel}) must be divisible by nHeads (${args.nHeads})`);
  }
}
