import type { CurriculumView } from '../env/curriculum';
import type { Level } from '../env/suite';
import { withOverrides, type RunConfig, type RunOverrides } from '../config/run-config';
import type { RunLimits } from './code-run';

/** Options of one run (the bench and the tests set them; the page uses the settings panel). */
export interface RunOptions extends RunLimits {
  /** Evaluate greedily on the level's training and held-out tasks every this many versions (0: never). */
  evalEvery?: number;
  /** Fields of the run's config set over the panel's (η, workers, the learner's, the level, …). */
  config?: RunOverrides;
}

/** How often a run evaluates by default, versions. */
const EVAL_EVERY = 10;

/** The config of a new run: the panel's (`base`), with the options' overrides. */
export function settingsFor(base: RunConfig, opts: RunOptions): RunConfig {
  return opts.config ? withOverrides(base, opts.config) : base;
}

/** Whether a run evaluates at all, and at `version` (periodic evaluations count from `firstVersion`). */
export function evaluates(opts: RunOptions, version?: number, firstVersion = 0): boolean {
  const every = opts.evalEvery ?? EVAL_EVERY;
  return every > 0 && (version === undefined || (version - firstVersion) % every === 0);
}

/** The level a run's evaluations score: its own, the curriculum's now (easy before one), or all. */
export function evaluationLevel(
  settings: Pick<RunConfig, 'task'>,
  curriculum: CurriculumView | null,
): Level | 'all' {
  return settings.task.level ?? (settings.task.curriculum.enabled ? (curriculum?.level ?? 'easy') : 'all');
}
