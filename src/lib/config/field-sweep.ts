import {
  configFields,
  fieldAt,
  overridesFromSets,
  RUN_CONFIG_CHOICES,
  type ConfigField,
  type RunConfig,
  type RunOverrides,
} from './run-config';

/** A value a sweep gives its field: a number, or one of a choice field's names (`learner.strategy`). */
export type SweepValue = number | string;

/**
 * A sensitivity sweep (the training doctor's "how much does this knob matter"): one numeric or
 * choice field of the run config set to each of `values` (a choice field's sweep is a comparison:
 * update strategies, schedules), each value run with every seed of `seeds`, one leg
 * after another, each a run of its own with the rest of the settings as they are.
 */
export interface FieldSweep {
  /** The field's path in `RunConfig` (`learner.clipEps`), as `configFields` lists it. */
  path: string;
  values: readonly SweepValue[];
  seeds: readonly number[];
}

/** A leg of a field sweep: its value, its seed, and what it sets over the panel's config. */
export interface FieldSweepLeg {
  path: string;
  value: SweepValue;
  seed: number;
  overrides: RunOverrides;
}

/** Seeds a sweep runs per value unless told otherwise (DESIGN §9: one seed a point says little). */
export const DEFAULT_SWEEP_SEEDS: readonly number[] = [1, 2, 3];

/**
 * The fields a sweep may vary: every number `configFields` lists, the seed aside (seeds are the
 * sweep's other axis), and every field of named choices. Each value is checked as the whole config
 * is (`withField`): by its `RUN_CONFIG_LIMITS` or `RUN_CONFIG_CHOICES` entry, or for the
 * environment, the model and η by their own checks.
 */
export function sweepableFields(c: RunConfig): ConfigField[] {
  return configFields(c).filter(
    (f) =>
      f.path !== 'seed' &&
      (typeof f.value === 'number' ||
        (typeof f.value === 'string' && RUN_CONFIG_CHOICES[f.path] !== undefined)),
  );
}

/** The choices a sweep of `path` may give (empty for a numeric field). */
export function sweepChoices(path: string): string[] {
  return (RUN_CONFIG_CHOICES[path] ?? []).filter((v): v is string => typeof v === 'string');
}

/**
 * The values of a sweep of `path` from a comma list: numbers (`parseNumberList`), or for a
 * choice field its names as written (`full, frozen`), each checked later against the field.
 */
export function parseSweepValues(text: string, path: string): SweepValue[] {
  if (sweepChoices(path).length === 0) return parseNumberList(text, 'values');
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (names.length === 0)
    throw new Error(`values: give at least one of ${sweepChoices(path).join(', ')}, as a comma list`);
  return names;
}

/** A value as a `--set` writes it (`Infinity` for an unbounded η). */
const setText = (v: SweepValue): string =>
  typeof v === 'string' ? v : Number.isFinite(v) ? String(v) : 'Infinity';

/** A comma list of numbers (`0.1, 0.2,0.3`): throws naming `what` and the first entry that is not one. */
export function parseNumberList(text: string, what: string): number[] {
  const parts = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (parts.length === 0) throw new Error(`${what}: give at least one, as a comma list (0.1, 0.2)`);
  return parts.map((s) => {
    const v = s === 'inf' || s === 'Infinity' ? Infinity : Number(s);
    if (Number.isNaN(v)) throw new Error(`${what}: "${s}" is not a number`);
    return v;
  });
}

/** `c` with `path` set to `value`, checked against the field's limits: throws naming the field. */
function checked(c: RunConfig, path: string, value: SweepValue): RunOverrides {
  try {
    return overridesFromSets([`${path}=${setText(value)}`], c);
  } catch (err) {
    // withField says `--set path=v: path must be …`; the sweep names the field alone.
    const inner = err instanceof Error && err.cause instanceof Error ? err.cause : err;
    throw new Error(inner instanceof Error ? inner.message : String(inner), { cause: err });
  }
}

/**
 * Throws with a readable message when `spec` cannot run on `c`: a field that is not one of the
 * sweepable numbers, no value or seed, a value twice, or a value or seed out of its field's limits
 * (`learner.clipEps must be a number from 0 to 1, got 5`).
 */
export function validateFieldSweep(c: RunConfig, spec: FieldSweep): void {
  if (!sweepableFields(c).some((f) => f.path === spec.path)) {
    const why =
      fieldAt(c, spec.path) === undefined ? 'there is no such field' : 'it is neither a number nor a choice';
    throw new Error(
      `${spec.path}: ${why} (a sweep varies one of the numbers or choices under Settings › Every setting)`,
    );
  }
  if (spec.values.length === 0) throw new Error(`${spec.path}: the sweep needs at least one value`);
  if (spec.seeds.length === 0) throw new Error('seeds: the sweep needs at least one seed');
  const twice = <V>(xs: readonly V[]) => xs.find((x, i) => xs.indexOf(x) !== i);
  const again = twice(spec.values);
  if (again !== undefined) throw new Error(`${spec.path}: ${again} is listed twice`);
  const seedAgain = twice(spec.seeds);
  if (seedAgain !== undefined) throw new Error(`seeds: ${seedAgain} is listed twice`);
  for (const v of spec.values) checked(c, spec.path, v);
  for (const s of spec.seeds) checked(c, 'seed', s);
}

/** The sweep's legs, value by value, each value with every seed in turn (validated first). */
export function fieldSweepLegs(c: RunConfig, spec: FieldSweep): FieldSweepLeg[] {
  validateFieldSweep(c, spec);
  return spec.values.flatMap((value) =>
    spec.seeds.map((seed) => ({
      path: spec.path,
      value,
      seed,
      overrides: overridesFromSets([`${spec.path}=${setText(value)}`, `seed=${seed}`], c),
    })),
  );
}
