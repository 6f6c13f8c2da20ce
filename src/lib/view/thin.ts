/**
 * A chart's points over a long run: past `cap`, the older half keeps every other point and the
 * newer half stays whole, so a run of any length draws at most `cap` points, dense where it is
 * recent and even on a log scale further back (as the store thins its chart points).
 */
export function thinned<T>(points: readonly T[], cap: number): T[] {
  if (points.length <= cap) return [...points];
  const half = Math.floor(points.length / 2);
  const older = points.slice(0, half).filter((_, i) => i % 2 === 0);
  return [...older, ...points.slice(half)];
}

/** Appends `point` to a chart's points, thinning them past `cap` (`thinned`). */
export function appended<T>(points: readonly T[], point: T, cap: number): T[] {
  return points.length < cap ? [...points, point] : thinned([...points, point], cap);
}
