/** What a training step adds to the pipeline's counters, and the report the page reads of it. */
import type { StepMetrics } from '../policy/metrics';
import type { PipelineCounters } from './controller-types';
import type { SeqLedger } from './ledger';
import { staleness } from './staleness';
import type { StrategyReport } from '../rl/strategy';
import type { EpisodeOutcome, PlayedGroup, StepReport } from './types';

/**
 * Counts a step that trained `groups` from `fromVersion`: one more step, its episodes (in the
 * `ledger` by seq, when given), and each group's staleness in the histogram. Returns the staleness of each group.
 */
export function countTrained<T extends EpisodeOutcome>(
  counters: PipelineCounters,
  groups: readonly PlayedGroup<T>[],
  fromVersion: number,
  ledger?: SeqLedger,
): number[] {
  counters.trainSteps += 1;
  if (ledger) for (const g of groups) for (const s of g.seqs) ledger.trained.add(s);
  counters.trainedEpisodes += groups.reduce((n, g) => n + g.trajectories.length, 0);
  const stale = groups.map((g) => staleness(fromVersion, g.oldestVersion));
  for (const s of stale) counters.stalenessHistogram[s] = (counters.stalenessHistogram[s] ?? 0) + 1;
  return stale;
}

/** The success share of the episodes of `groups` (0 with none): an update strategy's performance. */
export function successOf<T extends EpisodeOutcome>(groups: readonly PlayedGroup<T>[]): number {
  const trajs = groups.flatMap((g) => g.trajectories);
  return trajs.filter((x) => x.solved).length / Math.max(1, trajs.length);
}

/** The report of a step that trained `groups` and published `version`. */
export function stepReport<T extends EpisodeOutcome>(
  version: number,
  groups: readonly PlayedGroup<T>[],
  staleness: number[],
  metrics: StepMetrics,
  times: { waitMs: number; trainMs: number; at: number },
  strategy?: StrategyReport,
): StepReport {
  const trajs = groups.flatMap((g) => g.trajectories);
  const spreads = groups.filter((g) => g.trajectories.length > 1).map((g) => spread(g.trajectories));
  return {
    version,
    episodes: trajs.length,
    meanReturn: trajs.reduce((a, x) => a + x.return, 0) / Math.max(1, trajs.length),
    success: trajs.filter((x) => x.solved).length / Math.max(1, trajs.length),
    ...(spreads.length > 0 ? { returnSpread: spreads.reduce((a, x) => a + x, 0) / spreads.length } : {}),
    ...meanLength(trajs),
    staleness,
    loss: metrics.loss,
    metrics,
    ...times,
    ...(strategy ? { strategy } : {}),
  };
}

/** The standard deviation of a group's returns: 0 when every episode of the task got the same. */
function spread(outcomes: readonly EpisodeOutcome[]): number {
  const mean = outcomes.reduce((a, x) => a + x.return, 0) / outcomes.length;
  return Math.sqrt(outcomes.reduce((a, x) => a + (x.return - mean) ** 2, 0) / outcomes.length);
}

/** An episode's turns and the tokens its policy wrote, when it is a token trajectory (else null). */
function lengthOf(x: EpisodeOutcome): { turns: number; tokens: number } | null {
  if (!('turns' in x) || typeof x.turns !== 'number' || !('owned' in x) || !Array.isArray(x.owned))
    return null;
  const owned: readonly unknown[] = x.owned;
  return { turns: x.turns, tokens: owned.filter((o) => o === 1).length };
}

/** The mean episode length of a step's token trajectories; nothing when none is one. */
function meanLength(outcomes: readonly EpisodeOutcome[]): Pick<StepReport, 'meanTurns' | 'meanTokens'> {
  const lengths = outcomes.flatMap((x) => lengthOf(x) ?? []);
  if (lengths.length === 0) return {};
  const mean = (f: (l: { turns: number; tokens: number }) => number) =>
    lengths.reduce((a, l) => a + f(l), 0) / lengths.length;
  return { meanTurns: mean((l) => l.turns), meanTokens: mean((l) => l.tokens) };
}
