import { describe, expect, it } from 'vitest';
import { legalFor, type TokenBatch } from './batch';

/** A batch of one row of two positions over a vocabulary of `vocab` tokens. */
const batchOf = (legal: number[], vocab: number): TokenBatch => ({
  batch: 1,
  length: 2,
  tokens: new Int32Array(2),
  actions: new Int32Array(2),
  mask: new Float32Array([1, 0]),
  advantages: new Float32Array(2),
  returns: new Float32Array(2),
  legal: Uint8Array.from(legal),
  vocab,
});

describe('legalFor', () => {
  it('keeps the mask of a policy with the batch vocabulary as it is', () => {
    const b = batchOf([1, 0, 1, 0, 1, 1], 3);
    expect(legalFor(b, 3)).toBe(b.legal);
  });

  it('narrows each row to a policy stored with fewer tokens, the newer last', () => {
    const b = batchOf([1, 0, 1, 0, 0, 1, 1, 0], 4);
    expect(Array.from(legalFor(b, 3) ?? [])).toEqual([1, 0, 1, 0, 1, 1]);
  });

  it('refuses a mask where a token the policy lacks was legal, or a policy with more tokens', () => {
    expect(() => legalFor(batchOf([1, 0, 0, 1, 0, 0, 0, 0], 4), 3)).toThrow(
      "a token past the policy's vocabulary of 3 was legal at position 0",
    );
    expect(() => legalFor(batchOf([1, 0, 1, 0, 1, 1], 3), 4)).toThrow(
      'batch.legal covers 3 tokens, the policy has 4',
    );
  });
});
