import { describe, expect, it } from 'vitest';
import { about, PAGE_TERMS } from './page-terms';

describe('page terms', () => {
  it('has a label and an explanation for every part, emphasis balanced, no placeholder left', () => {
    for (const [term, entry] of Object.entries(PAGE_TERMS)) {
      expect(entry.label, term).not.toBe('');
      expect(entry.explanation.length, term).toBeGreaterThan(10);
      expect(entry.explanation.split('*').length % 2, term).toBe(1);
      expect(entry.explanation, term).not.toMatch(/\{\w+\}/);
    }
  });

  it('gives the explanation of a term', () => {
    expect(about('buffer')).toBe(PAGE_TERMS.buffer.explanation);
    expect(about('success')).toContain('held-out');
  });
});
