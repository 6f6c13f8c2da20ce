import {
  defaultRunConfig,
  hasPath,
  nested,
  OPTIONAL_FIELDS,
  overridesFromSets,
  parseValue,
  splitSet,
  validateRunConfig,
  withinOverrides,
  withOverrides,
  type RunConfig,
  type RunOverrides,
} from './run-config';

/**
 * The overrides of a command line's `--set path=value` list: each checked in turn as
 * `overridesFromSets` does, unless the whole list, checked at once, is valid — a setting that needs
 * another given after it (the reward's resource term needs a sandbox budget). Otherwise throws the
 * first bad setting's error. The benches and node scripts read `--set` with it.
 */
export function overridesFromSetList(
  sets: readonly string[],
  base: RunConfig = defaultRunConfig(),
): RunOverrides {
  try {
    return overridesFromSets(sets, base);
  } catch (err) {
    const all = sets.reduce<RunOverrides>((o, set) => {
      const [path, text] = splitSet(set);
      if (!hasPath(base, path.split('.')) && !OPTIONAL_FIELDS.includes(path)) throw err;
      return withinOverrides(o, nested(path, parseValue(text)));
    }, {});
    try {
      validateRunConfig(withOverrides(base, all));
    } catch {
      throw err;
    }
    return all;
  }
}
