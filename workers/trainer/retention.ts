import type { WeightsRecord } from '../../src/lib/storage/db';
import { trimConsumed } from '../../src/lib/storage/trajectories-store';
import { isMilestoneVersion, pruneVersions } from '../../src/lib/storage/weights-store';
import type { TrainerContext } from './context';

/** How a run keeps its versions: the newest `keepVersions`, plus version 0 and every `milestoneEvery`-th. */
export interface RetentionRule {
  runId: string;
  keepVersions: number;
  milestoneEvery: number;
  /** Consumed trajectories kept (a run that stores trajectories; absent: none stored). */
  keepConsumed?: number;
}

/**
 * A run's retention: the newest version it has examined (each pass reads only newer ones), and
 * the pass in progress. Each run has its own, so a late pass of the previous run (between the
 * legs of a race) never moves the next run's mark.
 */
export class Retention {
  through = -Infinity;
  private pass: Promise<void> = Promise.resolve();

  /**
   * Queues a pass that deletes versions (and, for a run that stores trajectories, consumed
   * trajectories) past the run's retention: off the critical path, one pass at a time, routine
   * (no timeline mark). Milestones go by the rule their versions were written under, so no
   * record is read.
   */
  queue(ctx: TrainerContext, r: RetentionRule): void {
    this.pass = this.pass
      .then(async () => {
        const d = await ctx.database();
        this.through = (
          await pruneVersions(d, r.runId, r.keepVersions, this.through, (v) => isMilestone(r, v))
        ).examinedThrough;
        if (r.keepConsumed !== undefined) await trimConsumed(d, r.runId, r.keepConsumed);
      })
      .catch(() => undefined);
  }
}

/** Version 0 and every `milestoneEvery`-th version of a run are kept for good (publish marks them). */
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
