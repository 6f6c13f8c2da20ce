import { describe, expect, it } from 'vitest';
import { DEFAULT_ENV_CONFIG } from '../env/config';
import { generateTasks } from '../env/families';
import type { Trajectory } from '../rl/trajectory';
import type { Sandbox } from '../sandbox/types';
import { abortedGroup, doneGroup, relabelJob } from './rollout-group';
import type { RolloutJob } from '../pipeline/types';

const task = (() => {
  const t = generateTasks(1)[0];
  if (!t) throw new Error('no generated task');
  return t;
})();
const job = (over: Partial<RolloutJob> = {}): RolloutJob => ({
  jobId: 7,
  runId: 'r',
  task,
  samples: 2,
  minVersion: 3,
  seqBase: 40,
  seed: 1,
  env: DEFAULT_ENV_CONFIG,
  relabelMaxAbs: 0,
  relabelMutations: 0,
  cls: 'normal',
  value: 0,
  ...over,
});
/** A trajectory whose tokens were written by `versions` (−1: not the policy's). */
const traj = (versions: number[]): Trajectory => ({
  taskId: task.id,
  level: task.level,
  group: 'g',
  tokens: versions.map(() => 0),
  owned: [],
  rewards: [],
  logProbs: [],
  values: [],
  versions,
  legal: new Uint8Array(0),
  solved: false,
  turns: 1,
  return: 0,
  parts: { pass: 0, ranOk: 0, closeness: 0, turnCost: 0, noSubmit: 0, total: 0 },
});

describe('rollout groups', () => {
  it('an aborted group holds nothing to store', () => {
    const g = abortedGroup(7, 2, 1_000, 4);
    expect(g).toMatchObject({ jobId: 7, status: 'aborted', seqs: [], oldestVersion: 2, newestVersion: 4 });
    expect(g.trajectories).toHaveLength(0);
    expect(g.endedAt).toBeGreaterThanOrEqual(1_000);
  });

  it("a done group takes the job's seqs and the oldest and newest versions that wrote a token", () => {
    const run = { interrupted: 1, startedAt: 5, endedAt: 9, current: 8 };
    const g = doneGroup(job(), [traj([-1, 3, 4]), traj([5, -1])], [], run);
    expect(g).toMatchObject({
      status: 'done',
      seqs: [40, 41],
      oldestVersion: 3,
      newestVersion: 5,
      interrupted: 1,
    });
    expect(doneGroup(job(), [traj([-1])], [], run).newestVersion).toBe(8);
  });

  it('relabels nothing when the job asks for none, and reports a failing episode without failing', async () => {
    const throwing: Sandbox = {
      kind: 'quickjs',
      run: () => Promise.reject(new Error('sandbox gone')),
      dispose: () => undefined,
    };
    const episodes = [['function f(x) { return x + 1; }']];
    const failures: unknown[] = [];
    expect(await relabelJob(job(), episodes, throwing, (e) => failures.push(e))).toEqual([]);
    expect(failures).toHaveLength(0);
    expect(
      await relabelJob(job({ relabelMaxAbs: 100 }), episodes, throwing, (e) => failures.push(e)),
    ).toEqual([]);
    expect(failures).toHaveLength(1);
  });
});
