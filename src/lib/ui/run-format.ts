/** How the run panel writes its figures: shares, staleness bounds, slots. */
import type { PipelineCounters } from '../pipeline/controller-types';
import { slotCounts, slotCountsLine, type SlotView } from '../pipeline/slots';

/** A share as a whole percentage. */
export const pct = (x: number): string => `${(x * 100).toFixed(0)}%`;

/** A rate shown against a threshold: rounded down, so that 69.8 % does not read as the 70 % it has not reached. */
export const pctDown = (x: number): string => `${Math.floor(x * 100 + 1e-9)}%`;

/** The staleness bounds η the panel offers. */
export const ETAS: readonly number[] = [0, 1, 2, 4, 8, Infinity];

/** How the panel names a staleness bound η. */
export const etaLabel = (eta: number): string =>
  eta === 0 ? '0 (synchronous)' : Number.isFinite(eta) ? String(eta) : 'unbounded';

/** A suite's task ids for a sentence: the first few, and how many more. */
export function taskIdsShown(tasks: readonly { id: string }[], shown = 8): string {
  return tasks.length <= shown
    ? tasks.map((t) => t.id).join(', ')
    : `${tasks
        .slice(0, shown)
        .map((t) => t.id)
        .join(', ')}, and ${(tasks.length - shown).toLocaleString('en')} more`;
}

/** Rollout slots per state, as the dashboard says them: "3 running · 1 blocked · 2 idle". */
export const slotsLine = (slots: readonly Pick<SlotView, 'state'>[]): string =>
  slotCountsLine(slotCounts(slots));

/** A slot's mean reward, or a dash before its first completed job. */
export const meanRewardText = (r: number | null): string => (r === null ? '–' : r.toFixed(3));

/** The mean time a job waited in the queue before it started (`–` before any started). */
export const meanWaitText = (c: Pick<PipelineCounters, 'queueWaitMs' | 'startedGroups'>): string =>
  c.startedGroups > 0 ? `${Math.round(c.queueWaitMs / c.startedGroups)} ms` : '–';
