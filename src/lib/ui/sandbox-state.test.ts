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
});
