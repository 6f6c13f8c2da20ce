import type { RunProgress, TrajectoryRecord } from '../storage/db';
import { oldestVersion } from './staleness';
import type { PlayedGroup } from './types';

/**
 * Groups of stored, unconsumed trajectories (a resumed run's replay), by job, the stalest first:
 * the buffer trains them in this order, and a group whose oldest token is old is the first to
 * pass the staleness bound η as training goes on.
 */
export function groupsFromRecords(records: readonly TrajectoryRecord[]): PlayedGroup[] {
  const byJob = new Map<number, TrajectoryRecord[]>();
  for (const r of records) byJob.set(r.jobId, [...(byJob.get(r.jobId) ?? []), r]);
  const groups = [...byJob.entries()].map(([jobId, rs]): PlayedGroup => {
    const versions = rs.flatMap((r) => r.trajectory.versions);
    return {
      jobId,
      status: 'done',
      trajectories: rs.map((r) => r.trajectory),
      relabelled: [],
      seqs: rs.map((r) => r.seq),
      oldestVersion: oldestVersion(versions),
      newestVersion: Math.max(-1, ...versions),
      interrupted: 0,
      startedAt: rs[0]?.createdAt ?? 0,
      endedAt: rs[0]?.createdAt ?? 0,
    };
  });
  return groups.sort((a, b) => a.oldestVersion - b.oldestVersion || a.jobId - b.jobId);
}

/**
 * Where a resumed run's job ids and seqs go on: past every id and seq it used. The saved progress
 * holds the pipeline's counters at the last publish; jobs launched after it are among the stored
 * records. The record with the largest seq alone does not do: a requeued job keeps its id and takes
 * new seqs, after jobs with larger ids (which then came back as one group of two tasks).
 */
export function resumeKeys(
  progress: RunProgress | undefined,
  unconsumed: readonly TrajectoryRecord[],
  last: { seq: number; jobId: number },
): { nextSeq: number; nextJobId: number } {
  let nextSeq = Math.max(progress?.nextSeq ?? 0, last.seq + 1);
  let nextJobId = Math.max(progress?.nextJobId ?? 0, last.jobId + 1);
  for (const r of unconsumed) {
    nextSeq = Math.max(nextSeq, r.seq + 1);
    nextJobId = Math.max(nextJobId, r.jobId + 1);
  }
  return { nextSeq, nextJobId };
}
