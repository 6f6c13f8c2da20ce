import { describe, expect, it } from 'vitest';
import { appended, thinned } from './thin';

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('thinned chart points', () => {
  it('keeps a series within its cap whole', () => {
    expect(thinned(range(5), 5)).toEqual(range(5));
  });

  it('keeps every other point of the older half and the newer half whole', () => {
    expect(thinned(range(10), 8)).toEqual([0, 2, 4, 5, 6, 7, 8, 9]);
  });

  it('stays within its cap over a long run, with the newest points whole and the first kept', () => {
    let points: number[] = [];
    for (let v = 0; v < 100_000; v++) points = appended(points, v, 2_000);
    expect(points.length).toBeLessThanOrEqual(2_000);
    expect(points.slice(-1_000)).toEqual(range(1_000).map((i) => 99_000 + i));
    expect(points[0]).toBe(0);
    expect([...points].sort((a, b) => a - b)).toEqual(points); // still in order
  });
});
