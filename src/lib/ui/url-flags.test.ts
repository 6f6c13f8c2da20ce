import { describe, expect, it } from 'vitest';
import { backendsFromUrl } from './url-flags';

describe('backendsFromUrl', () => {
  it('reads one or several backends', () => {
    expect(backendsFromUrl('?backend=wasm')).toEqual(['wasm']);
    expect(backendsFromUrl('?backends=webgl, cpu')).toEqual(['webgl', 'cpu']);
    expect(backendsFromUrl('')).toBeUndefined();
  });

  it('rejects a name that is no backend', () => {
    expect(() => backendsFromUrl('?backend=cuda')).toThrow(/unknown backend "cuda"/);
  });
});
