import { describe, expect, it } from 'vitest';
import { DEFAULT_VIEW, hashOf, VIEWS, viewFromHash } from './views';

describe('views in the URL hash', () => {
  it('opens the first screen for an empty or unknown hash', () => {
    expect(DEFAULT_VIEW).toBe('train');
    for (const hash of ['', '#', '#/', '#nothing', '#trainx', '#__proto__', '#constructor'])
      expect(viewFromHash(hash), hash).toBe('train');
  });

  it('reads every view back from its own hash', () => {
    for (const v of VIEWS) expect(viewFromHash(hashOf(v.id))).toBe(v.id);
  });

  it('takes a slash, any case, spaces and a trailing query', () => {
    expect(viewFromHash('#/runs')).toBe('runs');
    expect(viewFromHash('#SANDBOX')).toBe('sandbox');
    expect(viewFromHash('  tasks')).toBe('tasks');
    expect(viewFromHash('#tasks ')).toBe('tasks');
    expect(viewFromHash('#custom?x=1')).toBe('custom');
    expect(viewFromHash('#figures/more')).toBe('figures');
  });

  it('takes the aliases', () => {
    expect(viewFromHash('#settings')).toBe('advanced');
    expect(viewFromHash('#pipeline')).toBe('figures');
    expect(viewFromHash('#env')).toBe('custom');
  });

  it('has views with distinct ids and labels', () => {
    expect(new Set(VIEWS.map((v) => v.id)).size).toBe(VIEWS.length);
    expect(new Set(VIEWS.map((v) => v.label)).size).toBe(VIEWS.length);
    for (const v of VIEWS) expect(v.holds.length, v.id).toBeGreaterThan(10);
  });
});
