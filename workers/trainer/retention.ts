import type { WeightsRecord } from '../../src/lib/storage/db';
import { retentionSchedule, survives } from '../../src/lib/storage/retention';
import { trimConsumed } from '../../src/lib/storage/trajectories-store';
import { applyRetention, isMilestoneVersion } from '../../src/lib/storage/weights-store';
import type { TrainerContext } from './context';

/**
 * How a run keeps its versions: the newest `keepVersions`, version 0, and milestones every
 * `milestoneEvery`-th version thinning out with age (`storage/retention.ts`); only the newest
 * keeps its optimiser state.
 */
export interface RetentionRule {
  runId: string;
  keepVersions: number;
  milestoneEvery: number;
  /** Consumed trajectories kept (a run that stores trajectories; absent: none stored). */
  keepConsumed?: number;
}

/**
 * A run's retention: the pass in progress, whether another is due, and the version below which
 * every kept version has already lost its optimiser state (each pass reads only newer ones).
 * Each run has its own, so a late pass of the previous run (between the legs of a race) never
 * moves the next run's mark.
 */
export class Retention {
  strippedThrough = -Infinity;
  private pass: Promise<void> = Promise.resolve();
  private due = false;

  /**
   * Asks for a pass that deletes versions past the run's schedule, drops the optimiser state of
   * every kept version but the newest, and (for a run that stores trajectories) trims consumed
   * trajectories: off the critical path, one pass at a time, routine (no timeline mark). Calls
   * while a pass waits join it: a pass reads the store as it is when it runs, so publishes
   * faster than passes never queue one pass each.
   */
  queue(ctx: TrainerContext, r: RetentionRule): void {
    if (this.due) return;
    this.due = true;
    const s = retentionSchedule(r.keepVersions, r.milestoneEvery);
    this.pass = this.pass
      .then(async () => {
        this.due = false;
        const d = await ctx.database();
        const done = await applyRetention(
          d,
          r.runId,
          (newest, v) => survives(s, newest, v),
          this.strippedThrough,
        );
        this.strippedThrough = done.strippedThrough;
        if (r.keepConsumed !== undefined) await trimConsumed(d, r.runId, r.keepConsumed);
      })
      .catch(() => undefined);
  }
}

/** Version 0 and every `milestoneEvery`-th version are milestones while young (the schedule thins them with age). */
export function isMilestone(r: Pick<RetentionRule, 'milestoneEvery'>, v: number): boolean {
  return isMilestoneVersion(v, r.milestoneEvery);
}

/** The stored record of version `v` of a run (either kind of policy). */
export function versionRecord<C>(
  r: Pick<RetentionRule, 'runId' | 'milestoneEvery'>,
  v: number,
  checkpoint: C,
  metrics: Record<string, number>,
): Omit<WeightsRecord, 'checkpoint'> & { checkpoint: C } {
  return {
    runId: r.runId,
    version: v,
    createdAt: Date.now(),
    checkpoint,
    metrics,
    milestone: isMilestone(r, v),
  };
}
