import { describe, expect, it } from 'vitest';
import { DEFAULT_ENV_CONFIG } from '../env/config';
import type { Task } from '../env/suite';
import { observationTokens } from '../env/tokenizer';
import { SUBMIT, tokenId } from '../env/vocab';
import type { PlayedGroup, RolloutJob } from '../pipeline/types';
import type { PlayedListener } from '../run/session';
import type { Trajectory } from '../rl/trajectory';
import { FeedState, type FeedSource } from './feed-state.svelte';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A session that plays when the test says so. */
class FakeSession implements FeedSource {
  readonly listeners = new Set<PlayedListener>();
  constructor(readonly runId: string) {}
  onPlayed(listener: PlayedListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  /** One group of `n` episodes of a task at `level`, each submitting `x` written by `version`. */
  play(jobId: number, n: number, level: Task['level'] = 'easy', version = 1): void {
    const task: Task = { id: `t${jobId}`, level, examples: [{ input: 1, output: 1 }], hidden: [] };
    const obs = observationTokens(task.examples);
    const tr: Trajectory = {
      taskId: task.id,
      level,
      group: task.id,
      tokens: [...obs, tokenId('x'), SUBMIT],
      owned: [...obs.map(() => 0), 1, 1],
      rewards: [...obs.map(() => 0), 0, 1],
      logProbs: [],
      values: [],
      versions: [...obs.map(() => -1), version, version],
      legal: new Uint8Array(0),
      solved: true,
      turns: 1,
      return: 1,
      parts: { pass: 1, ranOk: 0, closeness: 0, turnCost: 0, noSubmit: 0, total: 1 },
    };
    const job = { jobId, task, env: DEFAULT_ENV_CONFIG } as const;
    const group: PlayedGroup = {
      jobId,
      status: 'done',
      trajectories: Array.from({ length: n }, () => tr),
      relabelled: [],
      seqs: Array.from({ length: n }, (_, i) => jobId * 100 + i),
      oldestVersion: version,
      newestVersion: version,
      interrupted: 0,
      startedAt: 0,
      endedAt: 0,
    };
    const full: RolloutJob = {
      ...job,
      runId: this.runId,
      samples: n,
      minVersion: 0,
      seqBase: jobId * 100,
      seed: 0,
      relabelMaxAbs: 0,
      relabelMutations: 0,
      cls: 'normal',
      value: 0,
    };
    for (const l of this.listeners) l(full, group, 'rollout-0');
  }
}

describe('FeedState', () => {
  it("follows a session's groups, shows them after its refresh, and announces a count, not each episode", async () => {
    let t = 0;
    const feed = new FeedState(undefined, () => t, 5);
    const s = new FakeSession('run-a');
    expect(feed.follow(s)).toBe(s);
    s.play(1, 2);
    s.play(2, 3, 'medium', 4);
    expect(feed.episodes).toHaveLength(0); // not before the refresh
    await sleep(20);
    expect(feed.episodes.map((e) => e.key)).toEqual(['202', '201', '200', '101', '100']);
    expect(feed.range).toEqual({ lo: 1, hi: 4 });
    expect(feed.announcement).toBe('5 new episodes in the program feed');
    t = 1_000;
    s.play(3, 1);
    await sleep(20);
    expect(feed.seen).toBe(6);
    expect(feed.announcement).toBe('5 new episodes in the program feed'); // too soon: counted, not said
    expect(feed.best.map((b) => b.taskId).sort()).toEqual(['t1', 't2', 't3']);
    feed.dispose();
  });

  it('filters by level, pins, and starts empty for another run but not for a resumed session of the same', async () => {
    const feed = new FeedState({ limit: 2, maxPinned: 1, maxTasks: 10 }, () => 0, 1);
    const s = new FakeSession('run-a');
    feed.follow(s);
    s.play(1, 1);
    s.play(2, 1, 'medium');
    await sleep(10);
    feed.setLevel('medium');
    expect(feed.episodes.map((e) => e.key)).toEqual(['200']);
    feed.setLevel('all');
    expect(feed.togglePin('100')).toBe(true);
    expect(feed.togglePin('200')).toBe(false); // one pin at most
    expect(feed.pinned).toEqual(['100']);
    s.play(3, 2);
    await sleep(10);
    expect(feed.episodes.map((e) => e.key)).toEqual(['301', '300', '100']);
    // The run stopped, then resumed: the feed goes on; the old session is not followed.
    feed.follow(null);
    const resumed = new FakeSession('run-a');
    feed.follow(resumed);
    expect(s.listeners.size).toBe(0);
    expect(feed.episodes).toHaveLength(3);
    feed.follow(new FakeSession('run-b'));
    expect(feed.episodes).toHaveLength(0);
    expect(feed.best).toHaveLength(0);
    expect(resumed.listeners.size).toBe(0);
    feed.dispose();
  });
});
