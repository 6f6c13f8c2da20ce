import { describe, expect, it } from 'vitest';
import { statusOf } from './trainer-state.svelte';

describe("the trainer panel's status", () => {
  it("names the lease's phase, or who holds a ready trainer", () => {
    expect(statusOf({ phase: 'starting', holder: null, error: null })).toBe('starting');
    expect(statusOf({ phase: 'error', holder: null, error: 'no backend' })).toBe('error');
    expect(statusOf({ phase: 'ready', holder: null, error: null })).toBe('ready');
    expect(statusOf({ phase: 'ready', holder: 'panel', error: null })).toBe('training');
    expect(statusOf({ phase: 'ready', holder: 'run', error: null })).toBe('busy');
    expect(statusOf({ phase: 'ready', holder: 'custom', error: null })).toBe('busy');
    expect(statusOf({ phase: 'ready', holder: 'store', error: null })).toBe('busy');
  });
});
