import { describe, expect, it } from 'vitest';
import { resumable } from './run-state.svelte';

describe('resumable', () => {
  const run = (status: 'created' | 'running' | 'paused' | 'finished' | 'failed', latestVersion = 3) => ({
    id: 'run-a',
    status,
    latestVersion,
  });

  it('lets a run go on that was interrupted, paused or failed with a stored version', () => {
    expect(resumable(run('running'), false, null)).toBe(true);
    expect(resumable(run('paused'), false, null)).toBe(true);
    // A full quota or a crash fails the run; what it stored is intact, and Resume goes on from it.
    expect(resumable(run('failed'), false, null)).toBe(true);
  });

  it('refuses a run without a version, a finished one, and one that a tab trains now', () => {
    expect(resumable(run('failed', -1), false, null)).toBe(false);
    expect(resumable(run('created', -1), false, null)).toBe(false);
    expect(resumable(run('finished'), false, null)).toBe(false);
    expect(resumable(run('running'), true, null)).toBe(false);
    expect(resumable(run('running'), false, 'run-a')).toBe(false);
    expect(resumable(run('paused'), false, 'run-b')).toBe(true);
  });
});
