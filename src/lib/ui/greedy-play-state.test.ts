import { describe, expect, it } from 'vitest';
import type { EvalTask } from '../env/evaluate';
import { VersionGone } from '../run/evaluations';
import type { FeedEpisode } from '../view/program-feed';
import { FeedState } from './feed-state.svelte';
import { GreedyPlayState, type GreedyPlayer } from './greedy-play-state.svelte';

const task = (id: string, heldOut: boolean): EvalTask => ({
  id,
  level: 'easy',
  examples: [{ input: 1, output: 2 }],
  hidden: [{ input: 2, output: 4 }],
  heldOut,
});

const episode = (key: string, version: number): FeedEpisode => ({
  key,
  jobId: -1,
  taskId: 'held-a',
  name: 'held-a',
  level: 'easy',
  examples: [],
  turns: [],
  reward: 1,
  solved: true,
  lane: 'evaluator',
  versions: [version],
  replay: { version, split: 'heldOut' },
});

/** A run shown with these stored versions; `play` decides how each play goes. */
function fakePlayer(versions: number[], play: (version: number) => Promise<FeedEpisode>) {
  const phases: string[] = [];
  const player: GreedyPlayer & { stored: number[] } = {
    runId: 'run-g',
    stored: versions,
    playTasks: [task('train-a', false), task('held-a', true)],
    storedVersions: async () => player.stored,
    playGreedily: async (version, _taskId, onLoaded) => {
      phases.push('asked');
      onLoaded?.();
      return play(version);
    },
  };
  return { player, phases };
}

describe('GreedyPlayState', () => {
  it('lists the stored versions newest first and chooses the newest and a held-out task', async () => {
    const { player } = fakePlayer([0, 5, 10], async (v) => episode('greedy:1', v));
    const s = new GreedyPlayState(player);
    expect(s.ready).toBe(false);
    await s.list();
    expect(s.versions.map((v) => v.label)).toEqual(['v10', 'v5', 'v0']);
    expect(s.version).toBe(10);
    expect(s.taskId).toBe('held-a');
    expect(s.groups.map((g) => g.split)).toEqual(['train', 'heldOut']);
    expect(s.phase).toBe('idle');
    expect(s.ready).toBe(true);
  });

  it('goes through loading and playing to done, and says how the episode went', async () => {
    let seen = '';
    const { player } = fakePlayer([3], async (v) => {
      seen = `${s.phase}: ${s.message}`;
      return episode('greedy:1', v);
    });
    const s = new GreedyPlayState(player);
    await s.list();
    const going = s.play();
    expect(s.phase).toBe('playing'); // the fake loads at once
    expect(s.ready).toBe(false);
    await going;
    expect(seen).toBe('playing: Playing v3 greedily on held-a…');
    expect(s.phase).toBe('done');
    expect(s.message).toBe(
      'Played v3 on held-a: solved, reward +1.00, 0 turns; shown at the top of the feed.',
    );
  });

  it('says a pruned version is gone and lists the versions kept', async () => {
    const { player } = fakePlayer([2, 4], async (v) => {
      player.stored = [4];
      throw new VersionGone('run-g', v);
    });
    const s = new GreedyPlayState(player);
    await s.list();
    s.version = 2;
    await s.play();
    expect(s.phase).toBe('error');
    expect(s.message).toBe('v2 is no longer stored: retention pruned it. Choose another version.');
    expect(s.versions.map((v) => v.version)).toEqual([4]);
    expect(s.version).toBe(4);
  });

  it('says why when the worker fails, and plays again afterwards', async () => {
    let fail = true;
    const { player } = fakePlayer([1], async (v) => {
      if (fail) throw new Error('the worker crashed: out of memory');
      return episode('greedy:2', v);
    });
    const s = new GreedyPlayState(player);
    await s.list();
    await s.play();
    expect(s.phase).toBe('error');
    expect(s.message).toBe('v1 could not be played: the worker crashed: out of memory');
    fail = false;
    await s.play();
    expect(s.phase).toBe('done');
  });

  it('says when no run is shown or it has no version', async () => {
    const { player } = fakePlayer([], async (v) => episode('greedy:1', v));
    const s = new GreedyPlayState(player);
    await s.list();
    expect(s.message).toBe('run-g has no stored version yet.');
    expect(s.ready).toBe(false);
    const none = new GreedyPlayState({ ...player, runId: null });
    await none.list();
    expect(none.message).toBe('Train a run, or show a stored one on Runs, to play its versions.');
  });
});

describe('FeedState.showReplay', () => {
  it('shows the replay at the top, pinned, and starts an empty feed for another run', () => {
    const feed = new FeedState();
    feed.showReplay(episode('greedy:1', 3), 'run-a');
    expect(feed.runId).toBe('run-a');
    expect(feed.episodes.map((e) => e.key)).toEqual(['greedy:1']);
    expect(feed.pinned).toEqual(['greedy:1']);
    expect(feed.seen).toBe(0);
    feed.showReplay(episode('greedy:2', 4), 'run-a');
    expect(feed.episodes.map((e) => e.key)).toEqual(['greedy:2', 'greedy:1']);
    feed.showReplay(episode('greedy:3', 5), 'run-b');
    expect(feed.runId).toBe('run-b');
    expect(feed.episodes.map((e) => e.key)).toEqual(['greedy:3']);
  });
});
