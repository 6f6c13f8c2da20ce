import { describe, expect, it } from 'vitest';
import { FAMILIES } from './families';
import {
  feedbackTokens,
  numberTokens,
  observationTokens,
  renderTokens,
  sourceToTokens,
  tokensToSource,
} from './tokenizer';
import { PROGRAM_TOKENS, tokenId, tokenText, VOCAB, VOCAB_SIZE } from './vocab';

describe('tokenizer', () => {
  it('round-trips tokens → source → tokens exactly', () => {
    for (const f of FAMILIES) {
      for (const p of f.params) {
        const src = f.source(p);
        const tokens = sourceToTokens(src);
        expect(tokensToSource(tokens)).toBe(src);
        expect(sourceToTokens(tokensToSource(tokens))).toEqual(tokens);
      }
    }
    const all = [...PROGRAM_TOKENS];
    expect(sourceToTokens(tokensToSource(all))).toEqual(all);
  });

  it('rejects characters that are not program tokens, naming them', () => {
    expect(() => sourceToTokens('x / 2')).toThrow(/character 1 \(" "\)/);
    expect(() => sourceToTokens('x.y')).toThrow(/"\."/);
  });

  it('has unique tokens and maps ids both ways', () => {
    expect(new Set(VOCAB).size).toBe(VOCAB_SIZE);
    for (const t of VOCAB) expect(tokenText(tokenId(t))).toBe(t);
    expect(() => tokenId('??')).toThrow(/unknown token/);
    expect(() => tokenText(VOCAB_SIZE)).toThrow(/outside/);
  });

  it('writes numbers with sign, digits, big and frac', () => {
    expect(numberTokens(0)).toEqual(['0']);
    expect(numberTokens(-45)).toEqual(['neg', '4', '5']);
    expect(numberTokens(2.5)).toEqual(['frac', '2']);
    expect(numberTokens(-0.5)).toEqual(['neg', 'frac', '0']);
    expect(numberTokens(3e9)).toEqual(['big']);
    expect(numberTokens(-3e9)).toEqual(['neg', 'big']);
  });

  it('writes observations and feedback', () => {
    const obs = observationTokens([
      { input: 1, output: 3 },
      { input: 2, output: -5 },
    ]);
    expect(renderTokens(obs)).toBe('<bos> f( 1 )= 3 ; f( 2 )= neg 5 <sep>');
    expect(renderTokens(feedbackTokens({ outputs: [3, 12] }))).toBe('got 3 ; 1 2 <sep>');
    expect(renderTokens(feedbackTokens({ error: 'timeout' }))).toBe('got err:timeout <sep>');
  });
});
