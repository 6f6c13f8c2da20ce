import { describe, expect, it } from 'vitest';
import { LaggedVersions } from './lagged-versions';

describe('LaggedVersions', () => {
  it('plays version max(0, v − lag) and lets go of what no later version needs', () => {
    const held = new LaggedVersions<string>(2);
    const dropped: string[] = [];
    const played = [0, 1, 2, 3, 4, 5].map((v) => held.push(v, `w${v}`, (w) => dropped.push(w)).version);
    expect(played).toEqual([0, 0, 0, 1, 2, 3]);
    expect(dropped).toEqual(['w0', 'w1', 'w2']);
    held.clear((w) => dropped.push(w));
    expect(dropped).toEqual(['w0', 'w1', 'w2', 'w3', 'w4', 'w5']);
  });

  it('plays the newest version at lag 0', () => {
    const held = new LaggedVersions<number>(0);
    expect([3, 4, 9].map((v) => held.push(v, v * 10).item)).toEqual([30, 40, 90]);
  });

  it('never plays further back than the lag when a version was skipped, and refuses one out of order', () => {
    const held = new LaggedVersions<number>(4);
    for (const v of [0, 1, 2]) held.push(v, v);
    // Versions 3–9 never came: 10 − 4 = 6 is not held, so the oldest held after it stands in.
    expect(held.push(10, 10).version).toBe(10);
    expect(held.push(11, 11).version).toBe(10);
    expect(held.push(14, 14).version).toBe(10);
    expect(held.push(15, 15).version).toBe(11);
    expect(() => held.push(11, 11)).toThrow('version 11 came after 15');
    expect(() => new LaggedVersions(-1)).toThrow('a lag must be an integer ≥ 0, got -1');
  });

  it('takes the same version again in place of the copy it held', () => {
    const held = new LaggedVersions<string>(1);
    const dropped: string[] = [];
    held.push(0, 'a');
    held.push(1, 'b', (w) => dropped.push(w));
    expect(held.push(1, 'b2', (w) => dropped.push(w))).toEqual({ version: 0, item: 'a' });
    expect(dropped).toEqual(['b']);
    expect(held.push(2, 'c').item).toBe('b2');
  });
});
