import type { RunConfig, StartFrom } from '../config/run-config';
import { BUILT_IN_BASES, isBuiltInBase } from '../policy/bases';
import type { RunRecord } from '../storage/db';

/** How the run panel names what a run trains. */
export function loraLabel(lora: RunConfig['policy']['lora']): string {
  return lora ? `LoRA, rank ${lora.rank}` : 'every parameter';
}

/** The stored version a run starts from, or null (fresh weights, a built-in base). */
export const storedStart = (s: StartFrom | null | undefined) => (s && 'runId' in s ? s : null);

/** The start-from select's value: '' (fresh), `base:<id>`, or a stored run's id. */
export const startFromValue = (s: StartFrom | null): string =>
  s === null ? '' : 'base' in s ? `base:${s.base}` : s.runId;

/** What the start-from select's value names: a built-in base, a stored run's newest version, or fresh weights. */
export function startFromOf(
  value: string,
  runs: readonly Pick<RunRecord, 'id' | 'latestVersion'>[],
): StartFrom | null {
  const base = value.startsWith('base:') ? value.slice(5) : null;
  if (isBuiltInBase(base)) return { base };
  const from = runs.find((r) => r.id === value);
  return from ? { runId: from.id, version: from.latestVersion } : null;
}

/** `, from run-3 version 40` or `, from the built-in base: …`; empty for fresh weights. */
export function startLabel(s: StartFrom | null | undefined): string {
  if (!s) return '';
  if (!('base' in s)) return `, from ${s.runId} version ${s.version}`;
  // A base a later build no longer ships still names itself in a stored run's label.
  return isBuiltInBase(s.base) ? `, from the ${BUILT_IN_BASES[s.base].label}` : `, from the base ${s.base}`;
}

/** What a stored run trains, and on which tasks when they are a suite of the user's. */
export function trainsLabel(s: Pick<RunConfig, 'policy' | 'task'>): string {
  const what = loraLabel(s.policy.lora);
  const from = startLabel(s.policy.startFrom);
  const suite = s.task.suite;
  const n = suite?.tasks.length ?? 0;
  return `${what}${suite ? `, on "${suite.name}" (${n} ${n === 1 ? 'task' : 'tasks'})` : ''}${from}`;
}

/** `η = 4, decoupled PPO`: what tells runs apart in the lists (the legs of a race or a sweep). */
export function howLabel(s: Pick<RunConfig, 'pipeline' | 'learner'>): string {
  const { eta, playLag } = s.pipeline;
  const { loss, updatesPerBatch: updates } = s.learner;
  // A fixed lag runs at η = 0: the lag it holds is what the run is about.
  const lag = playLag ? `staleness held at ${playLag}` : `η = ${Number.isFinite(eta) ? eta : '∞'}`;
  return `${lag}, ${loss === 'ppo' ? 'PPO clip' : 'decoupled PPO'}${updates > 1 ? `, ${updates} updates / batch` : ''}`;
}

/**
 * Whether a stored run can go on from its newest version: it has one; it was running when its
 * page closed, was paused, or failed (what it stored is intact: a full quota, a crash); and
 * neither another tab (`elsewhere`) nor this page (`running`: the id of the run it trains) trains it.
 */
export function resumable(
  r: Pick<RunRecord, 'id' | 'status' | 'latestVersion'>,
  elsewhere: boolean,
  running: string | null,
): boolean {
  const stopped = r.status === 'running' || r.status === 'paused' || r.status === 'failed';
  return r.latestVersion >= 0 && stopped && !elsewhere && r.id !== running;
}
