import { describe, expect, it } from 'vitest';
import { evictionNotice } from './quota';

describe('evictionNotice', () => {
  it('says what an eviction deleted, and what for', () => {
    expect(evictionNotice({ trajectories: 3, versions: 1, events: 0 }, 'the run')).toBe(
      'Storage was full: deleted 3 trained trajectories, 1 old version and 0 old timeline events to make room for the run.',
    );
  });

  it('does not call an eviction that deleted nothing a success', () => {
    const m = evictionNotice({ trajectories: 0, versions: 0, events: 0 }, 'the run');
    expect(m).toBe('Storage was full, and nothing old was left to delete to make room for the run.');
    expect(m).not.toContain('deleted 0');
  });
});
