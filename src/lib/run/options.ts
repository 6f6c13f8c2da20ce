import type { CurriculumView } from '../env/curriculum';
import type { Level } from '../env/suite';
import type { CodeRunConfig } from '../pipeline/code-workload';
import type { RunSettings } from '../pipeline/run-settings';
import type { RunLimits } from './code-run';

/** Options of one run (the bench and the tests set them; the page uses the settings panel). */
export interface RunOptions extends RunLimits {
  /** Train on this level only (the learn bench trains on easy). */
  level?: Level;
  /** Evaluate greedily on the level's training and held-out tasks every this many versions (0: never). */
  evalEvery?: number;
  /** Overrides of the run's code-env defaults (the bench compares estimators this way). */
  run?: Partial<CodeRunConfig>;
  /** Adam learning rate for this run; the run's default otherwise. */
  learningRate?: number;
  /** Overrides of the pipeline settings (η, workers, loss, replay, …). */
  settings?: Partial<RunSettings>;
}

/** How often a run evaluates by default, versions. */
const EVAL_EVERY = 10;

/** Settings of a new run: the panel's (`base`), with the options' overrides. */
export function settingsFor(base: RunSettings, opts: RunOptions): RunSettings {
  const code: CodeRunConfig = {
    ...base.code,
    ...opts.run,
    ...(opts.learningRate ? { learningRate: opts.learningRate } : {}),
  };
  return { ...base, ...opts.settings, code, level: opts.level ?? opts.settings?.level ?? base.level };
}

/** Whether a run evaluates at all, and at `version` (periodic evaluations count from `firstVersion`). */
export function evaluates(opts: RunOptions, version?: number, firstVersion = 0): boolean {
  const every = opts.evalEvery ?? EVAL_EVERY;
  return every > 0 && (version === undefined || (version - firstVersion) % every === 0);
}

/** The level a run's evaluations score: its own, the curriculum's now (easy before one), or all. */
export function evaluationLevel(
  opts: RunOptions,
  settings: RunSettings,
  curriculum: CurriculumView | null,
): Level | 'all' {
  return opts.level ?? (settings.code.curriculum.enabled ? (curriculum?.level ?? 'easy') : 'all');
}
