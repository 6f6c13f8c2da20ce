import type { Example } from './suite';
import { BOS, PROGRAM_TOKENS, SEP, tokenId, tokenText, type ProgramToken } from './vocab';

const programTokens = new Set<string>(PROGRAM_TOKENS);

/** Splits JavaScript source into program tokens (one per character); throws on anything else. */
export function sourceToTokens(source: string): ProgramToken[] {
  return [...source].map((ch, i) => {
    if (!programTokens.has(ch))
      throw new Error(`character ${i} (${JSON.stringify(ch)}) is not a program token`);
    return ch as ProgramToken;
  });
}

/** Joins program tokens into JavaScript source (the inverse of `sourceToTokens`). */
export function tokensToSource(tokens: readonly ProgramToken[]): string {
  return tokens.join('');
}

/** Numbers at or above this magnitude are shown as `big`. */
export const BIG = 1_000_000;

/** Tokens of a number: `neg`? then digits; `big` past ±10^6; `frac` before a non-integer's integer part. */
export function numberTokens(n: number): string[] {
  if (!Number.isFinite(n)) return ['big'];
  const sign = n < 0 ? ['neg'] : [];
  const abs = Math.abs(n);
  if (abs >= BIG) return [...sign, 'big'];
  const frac = Number.isInteger(abs) ? [] : ['frac'];
  return [...sign, ...frac, ...String(Math.trunc(abs))];
}

/** The observation that starts an episode: `<bos> f( 1 )= 3 ; f( 2 )= 5 <sep>`. */
export function observationTokens(examples: readonly Example[]): number[] {
  const out: string[] = [];
  examples.forEach((e, i) => {
    if (i > 0) out.push(';');
    out.push('f(', ...numberTokens(e.input), ')=', ...numberTokens(e.output));
  });
  return [BOS, ...out.map(tokenId), SEP];
}

/** What a `<run>` shows: `got 3 ; 5 ; 9 <sep>`, or `got err:KIND <sep>`. */
export function feedbackTokens(result: { outputs: readonly number[] } | { error: string }): number[] {
  const body =
    'error' in result
      ? [`err:${result.error}`]
      : result.outputs.flatMap((y, i) => (i > 0 ? [';', ...numberTokens(y)] : numberTokens(y)));
  return [tokenId('got'), ...body.map(tokenId), SEP];
}

/** Human-readable text of a token sequence (for the page and for test messages). */
export function renderTokens(ids: readonly number[]): string {
  return ids.map(tokenText).join(' ');
}
