/**
 * The token vocabulary of the code-writing environment (DESIGN §3). Every program
 * token is one character of JavaScript, so tokens → source → tokens is exact. The policy only
 * depends on `VOCAB_SIZE` and the ids exported here.
 */
export const SPECIAL_TOKENS = ['<pad>', '<bos>', '<run>', '<submit>', '<sep>'] as const;

/** Program tokens: an expression in `x`. Comparison and ternary are for the harder levels. */
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
  '<',
  '>',
  '?',
  ':',
] as const;

/** Error kinds a run reports as feedback (one token each, from the sandbox's error kinds). */
export const ERROR_TOKENS = [
  'err:syntax',
  'err:runtime',
  'err:timeout',
  'err:memory',
  'err:output',
  'err:internal',
] as const;

/**
 * Observation tokens: examples `f( 1 )= 3 ;`, run feedback `got 3 ; 5 ; 9`, numbers as
 * `neg`? digits (`big` for |n| ≥ 10^6, `frac` before a non-integer's integer part).
 */
export const OBSERVATION_TOKENS = ['f(', ')=', ';', 'got', 'neg', 'big', 'frac', ...ERROR_TOKENS] as const;

/**
 * Tokens of a test report (the tool-use task kind, `env/test-report.ts`): `pass 3 of 7`. Appended
 * last, so that every older token keeps its id and a policy stored with the older, smaller
 * vocabulary still reads and writes the tasks it was trained on.
 */
export const REPORT_TOKENS = ['pass', 'of'] as const;

export type ProgramToken = (typeof PROGRAM_TOKENS)[number];

export const VOCAB: readonly string[] = [
  ...SPECIAL_TOKENS,
  ...PROGRAM_TOKENS,
  ...OBSERVATION_TOKENS,
  ...REPORT_TOKENS,
];
export const VOCAB_SIZE = VOCAB.length;

const index = new Map(VOCAB.map((t, i) => [t, i]));

/** Id of a token; throws on a token that is not in the vocabulary. */
export function tokenId(token: string): number {
  const id = index.get(token);
  if (id === undefined) throw new Error(`unknown token ${JSON.stringify(token)}`);
  return id;
}

/** The token of an id; throws on an id outside the vocabulary. */
export function tokenText(id: number): string {
  const t = VOCAB[id];
  if (t === undefined) throw new Error(`token id ${id} is outside the vocabulary (${VOCAB_SIZE})`);
  return t;
}

export const PAD = tokenId('<pad>');
export const BOS = tokenId('<bos>');
export const RUN = tokenId('<run>');
export const SUBMIT = tokenId('<submit>');
export const SEP = tokenId('<sep>');
/** Ids of the program tokens, in `PROGRAM_TOKENS` order. */
export const PROGRAM_IDS: readonly number[] = PROGRAM_TOKENS.map(tokenId);
