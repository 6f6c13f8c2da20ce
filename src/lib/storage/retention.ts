/**
 * Which weight versions of a run stay stored: the newest `keepLast`, version 0, and milestones
 * that thin out with age, so that what a long run keeps grows with the logarithm of its length,
 * not with its length. Pure: the trainer's retention pass and the run panel's storage bound both
 * read it.
 *
 * A milestone is a multiple of a spacing that doubles as its age (newest − version) doubles:
 * `every` for ages under `2·every·perLevel`, then `2·every`, `4·every`, … Each doubling of age
 * holds about `perLevel` milestones: roughly even on a log scale of age, which is what a user
 * scrolling back through a run needs. Spacings divide one another and never shrink with age, so
 * a version deleted once would never be kept again: the schedule only ever deletes.
 */
import type { ModelArgs } from '../policy/config';

/** A run's retention settings. */
export interface RetentionSchedule {
  /** Newest versions kept whatever their number (at least 1: the version a resume continues from). */
  keepLast: number;
  /** Spacing of the youngest milestones, in versions (the finest resolution kept past `keepLast`). */
  every: number;
  /** Milestones per doubling of age. */
  perLevel: number;
}

/** Milestones per doubling of age: ~8 × log₂(versions / 80) + 16 milestones in all with `every` = 10. */
export const MILESTONES_PER_LEVEL = 8;

/** The schedule of a run's retention settings (`RunConfig.keepVersions`, `milestoneEvery`). */
export function retentionSchedule(keepVersions: number, milestoneEvery: number): RetentionSchedule {
  return {
    keepLast: Math.max(1, Math.floor(keepVersions)),
    every: Math.max(1, Math.floor(milestoneEvery)),
    perLevel: MILESTONES_PER_LEVEL,
  };
}

/** Spacing of milestones `age` versions behind the newest: `every · 2^k`, k = ⌊log₂(age / (every·perLevel))⌋ ≥ 0. */
export function milestoneSpacing(s: RetentionSchedule, age: number): number {
  const band = s.every * s.perLevel;
  let spacing = s.every;
  for (let lo = 2 * band; age >= lo; lo *= 2) spacing *= 2;
  return spacing;
}

/** Whether version `v` stays stored while the run's newest version is `newest`. */
export function survives(s: RetentionSchedule, newest: number, v: number): boolean {
  const age = newest - v;
  if (v === 0 || age < s.keepLast) return true;
  return v % milestoneSpacing(s, age) === 0;
}

/** Every version 0 … `newest` that stays stored, ascending: O(keepLast + perLevel · log(newest)). */
export function survivors(s: RetentionSchedule, newest: number): number[] {
  if (newest < 0) return [];
  const kept = new Set<number>([0]);
  for (let v = Math.max(0, newest - s.keepLast + 1); v <= newest; v++) kept.add(v);
  // Walk back band by band: within a band the spacing is fixed, so its milestones are its multiples.
  let v = newest - s.keepLast;
  while (v > 0) {
    const spacing = milestoneSpacing(s, newest - v);
    const m = v - (v % spacing);
    if (m > 0 && survives(s, newest, m)) kept.add(m);
    v = m === v ? v - spacing : m;
  }
  return [...kept].sort((a, b) => a - b);
}

/** How many versions stay stored at most while the run's newest is `newest` (exact for that newest). */
export function keptCount(s: RetentionSchedule, newest: number): number {
  return survivors(s, newest).length;
}

/** Scalar parameters of the transformer policy of shape `args` (as `paramShapes` lays them out). */
export function modelParameterCount(a: ModelArgs): number {
  const { vocabSize: V, contextLength: T, dModel: D, nLayers: L, dMlp: M } = a;
  const P = a.pointerDim ?? 0;
  const block = 4 * D + (D * 3 * D + 3 * D) + (D * D + D) + (D * M + M) + (M * D + D);
  const pointer = P > 0 ? 2 * D * P + D + 1 : 0;
  const head = a.tieEmbeddings ? 0 : D * V; // a tied head is tok_emb itself
  return V * D + T * D + L * block + 2 * D + head + D + 1 + pointer;
}

/** What a run stores, bytes: its versions by the schedule, one Adam state (two moments a parameter). */
export interface StorageBound {
  /** Versions kept when the run has published `versions`. */
  versions: number;
  /** Bytes of those versions, the newest's optimiser state included. */
  bytes: number;
}

/**
 * The bytes a run's versions take after `published` versions: each stored version holds the
 * float32 weights (`bytesPerVersion`); only the newest holds Adam's two moments beside them.
 */
export function versionStorage(
  s: RetentionSchedule,
  bytesPerVersion: number,
  published: number,
): StorageBound {
  const versions = keptCount(s, Math.max(0, published - 1));
  return { versions, bytes: versions * bytesPerVersion + 2 * bytesPerVersion };
}
