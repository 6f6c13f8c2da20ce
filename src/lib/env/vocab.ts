/**
 * First version of the token vocabulary (DESIGN §3). The code-writing environment (issue 4)
 * extends it; the policy only depends on `VOCAB_SIZE` and the ids of the special tokens.
 */
export const SPECIAL_TOKENS = ['<pad>', '<bos>', '<run>', '<submit>', '<sep>'] as const;
export const PROGRAM_TOKENS = [
  '0',
  '1',
  '2',
  '3',
  '4',
  '5',
  '6',
  '7',
  '8',
  '9',
  'x',
  '+',
  '-',
  '*',
  '%',
  '(',
  ')',
] as const;
export const OBSERVATION_TOKENS = [
  'f(',
  ')=',
  ';',
  'neg',
  'err:syntax',
  'err:runtime',
  'err:timeout',
  'err:output',
] as const;

export const VOCAB: readonly string[] = [...SPECIAL_TOKENS, ...PROGRAM_TOKENS, ...OBSERVATION_TOKENS];
export const VOCAB_SIZE = VOCAB.length;

const index = new Map(VOCAB.map((t, i) => [t, i]));

/** Id of a token; throws on a token that is not in the vocabulary. */
export function tokenId(token: string): number {
  const id = index.get(token);
  if (id === undefined) throw new Error(`unknown token ${JSON.stringify(token)}`);
  return id;
}

export const PAD = tokenId('<pad>');
export const BOS = tokenId('<bos>');
export const RUN = tokenId('<run>');
export const SUBMIT = tokenId('<submit>');
