import { describe, expect, it } from 'vitest';
import type { Trajectory } from '../rl/trajectory';
import type { TrajectoryRecord } from '../storage/db';
import { groupsFromRecords, resumeKeys } from './resume';

/** A stored trajectory of `jobId` whose policy tokens were written by `versions` (−1: observation). */
const record = (seq: number, jobId: number, versions: number[]): TrajectoryRecord => {
  const trajectory: Trajectory = {
    taskId: `t${jobId}`,
    level: 'easy',
    group: 'g',
    tokens: versions.map((_, i) => i),
    owned: versions.map((v) => (v >= 0 ? 1 : 0)),
    rewards: versions.map(() => 0),
    logProbs: versions.map(() => -0.5),
    values: versions.map(() => 0),
    versions,
    legal: new Uint8Array(0),
    solved: false,
    turns: 1,
    return: 0,
    parts: { pass: 0, ranOk: 0, closeness: 0, turnCost: 0, noSubmit: 0, total: 0 },
  };
  return { runId: 'r', seq, jobId, consumed: 0, createdAt: seq, trajectory };
};

describe('groupsFromRecords', () => {
  it('groups by job, keeps every seq, and orders the stalest group first', () => {
    const groups = groupsFromRecords([
      record(10, 5, [-1, 6, 7]),
      record(11, 5, [-1, 6]),
      record(12, 3, [-1, 4, 7]), // the oldest token of job 3 is version 4, stored after job 5's
      record(13, 7, [-1, 6]),
    ]);
    expect(groups.map((g) => g.jobId)).toEqual([3, 5, 7]);
    expect(groups.map((g) => g.oldestVersion)).toEqual([4, 6, 6]);
    expect(groups.map((g) => g.newestVersion)).toEqual([7, 7, 6]);
    expect(groups.map((g) => g.seqs)).toEqual([[12], [10, 11], [13]]);
    expect(groups[1]?.trajectories).toHaveLength(2);
    expect(groups.every((g) => g.status === 'done' && g.relabelled.length === 0)).toBe(true);
  });

  it('has no groups without records', () => {
    expect(groupsFromRecords([])).toEqual([]);
  });
});

describe('resumeKeys', () => {
  it('goes on past every stored job id and seq, and past the saved progress', () => {
    // Job 0 was requeued after job 1 ran: it holds the largest seq, job 1 the largest id.
    const unconsumed = [
      record(2, 1, [-1, 3]),
      record(3, 1, [-1, 3]),
      record(4, 0, [-1, 3]),
      record(5, 0, [-1, 3]),
    ];
    const last = { seq: 5, jobId: 0 };
    expect(resumeKeys(undefined, unconsumed, last)).toEqual({ nextSeq: 6, nextJobId: 2 });
    // The saved progress knows of jobs whose episodes were all trained and trimmed away.
    expect(resumeKeys({ nextJobId: 9, nextSeq: 40 }, unconsumed, last)).toEqual({
      nextSeq: 40,
      nextJobId: 9,
    });
    // Nothing stored, nothing saved: from the start.
    expect(resumeKeys(undefined, [], { seq: -1, jobId: -1 })).toEqual({ nextSeq: 0, nextJobId: 0 });
  });
});
