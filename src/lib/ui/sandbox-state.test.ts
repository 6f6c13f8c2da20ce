import { describe, expect, it } from 'vitest';
import { parseInputs } from './sandbox-state.svelte';

describe('parseInputs', () => {
  it('accepts a JSON array', () => {
    expect(parseInputs('[1, "a", [2]]')).toEqual([1, 'a', [2]]);
  });
  it('rejects JSON that is not an array, and text that is not JSON', () => {
    expect(() => parseInputs('{"a":1}')).toThrow(/must be a JSON array/);
    expect(() => parseInputs('[1,')).toThrow(/not valid JSON/);
  });
  it('rejects a number past the largest double, saying which input', () => {
    expect(() => parseInputs('[1e400]')).toThrow('input 0 is past the largest number');
    expect(() => parseInputs('[1, [2, -1e999]]')).toThrow('input 1[1] is past the largest number');
  });
});
