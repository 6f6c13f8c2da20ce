import { describe, expect, it } from 'vitest';
import type { Trajectory } from '../rl/trajectory';
import type { TrajectoryRecord } from './db';
import { replayFromRecords, resumeKeys } from './resume';

/** A stored trajectory of `jobId` whose policy tokens were written by `versions` (−1: observation). */
const record = (seq: number, jobId: number, versions: number[], createdAt = jobId): TrajectoryRecord => {
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
  return { runId: 'r', seq, jobId, consumed: 0, createdAt, trajectory };
};

describe('replayFromRecords', () => {
  it('groups by job, keeps every seq, and orders the stalest group first', () => {
    const { groups, superseded } = replayFromRecords([
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
    expect(superseded).toEqual([]);
  });

  it('keeps the later attempt of a job stored twice (a retry), and supersedes the earlier', () => {
    // Job 7 was stored at seqs 0–1, its worker lost before it answered, and the job played again
    // at seqs 8–9 (stored later); job 8 sits between. Adjacent seqs of two attempts still part.
    const { groups, superseded } = replayFromRecords([
      record(0, 7, [-1, 1], 100),
      record(1, 7, [-1, 1], 100),
      record(2, 8, [-1, 1], 101),
      record(3, 8, [-1, 1], 101),
      record(8, 7, [-1, 2], 300),
      record(9, 7, [-1, 2], 300),
      record(4, 9, [-1, 1], 200),
      record(5, 9, [-1, 1], 200),
      record(6, 9, [-1, 2], 250),
      record(7, 9, [-1, 2], 250),
    ]);
    expect(groups.map((g) => [g.jobId, g.seqs])).toEqual([
      [8, [2, 3]],
      [7, [8, 9]],
      [9, [6, 7]],
    ]);
    expect(groups.every((g) => g.trajectories.length === 2)).toBe(true);
    expect(superseded).toEqual([0, 1, 4, 5]);
  });

  it('has no groups without records', () => {
    expect(replayFromRecords([])).toEqual({ groups: [], superseded: [] });
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
