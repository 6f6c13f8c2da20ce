import { oldestVersion } from '../pipeline/staleness';
import type { PlayedGroup, RunProgress } from '../pipeline/types';
import type { TrajectoryRecord } from './db';

/** A resumed run's replay: its stored, unconsumed groups, and the seqs no group takes. */
export interface StoredReplay {
  /** One group per job, the stalest first (see `replayFromRecords`). */
  groups: PlayedGroup[];
  /**
   * Seqs of attempts a retry of the same job superseded (a worker lost after it stored a group
   * but before it answered: the job was played again under the same id). They are not trained;
   * the next published version marks them consumed.
   */
  superseded: number[];
}

/**
 * Groups of stored, unconsumed trajectories (a resumed run's replay), by job, the stalest first:
 * the buffer trains them in this order, and a group whose oldest token is old is the first to
 * pass the staleness bound η as training goes on. One attempt of a job is the records stored
 * together (one `createdAt`, consecutive seqs); of a job stored twice, the later attempt is the
 * group and the earlier is superseded (merged, they would make one group of two attempts, with
 * the wrong group baseline).
 */
export function replayFromRecords(records: readonly TrajectoryRecord[]): StoredReplay {
  const attempts = new Map<number, TrajectoryRecord[][]>();
  for (const r of [...records].sort((a, b) => a.seq - b.seq)) {
    const list = attempts.get(r.jobId) ?? [];
    const current = list.at(-1);
    const prev = current?.at(-1);
    if (current && prev && prev.seq + 1 === r.seq && prev.createdAt === r.createdAt) current.push(r);
    else list.push([r]);
    attempts.set(r.jobId, list);
  }
  const superseded: number[] = [];
  const groups: PlayedGroup[] = [];
  for (const [jobId, list] of attempts) {
    for (const old of list.slice(0, -1)) superseded.push(...old.map((r) => r.seq));
    const rs = list.at(-1) ?? [];
    const versions = rs.flatMap((r) => r.trajectory.versions);
    groups.push({
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
    });
  }
  groups.sort((a, b) => a.oldestVersion - b.oldestVersion || a.jobId - b.jobId);
  return { groups, superseded: superseded.sort((a, b) => a - b) };
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
