import { describe, expect, it } from 'vitest';
import { Rng } from '../random';
import { DEFAULT_REPLAY, type ReplayConfig } from '../rl/replay-config';
import { emptyCounters } from './controller-types';
import { ReplayFeed, releaseOrder } from './replay-feed';
import type { EpisodeOutcome, PlayedGroup } from './types';

/** A finished group of two episodes whose oldest token was written by `oldest`. */
const group = (jobId: number, oldest: number): PlayedGroup<EpisodeOutcome> => ({
  jobId,
  status: 'done',
  trajectories: [
    { return: 1, solved: true },
    { return: 0, solved: false },
  ],
  relabelled: [],
  seqs: [2 * jobId, 2 * jobId + 1],
  oldestVersion: oldest,
  newestVersion: oldest,
  interrupted: 0,
  startedAt: 0,
  endedAt: 1,
});

function feed(replay: Partial<ReplayConfig> = {}, groups: PlayedGroup<EpisodeOutcome>[] = [], version = 0) {
  const counters = emptyCounters();
  const f = new ReplayFeed({ replay: { ...DEFAULT_REPLAY, ...replay }, batchGroups: 2 }, counters, {
    version,
    groups,
  });
  return { f, counters };
}

describe('ReplayFeed', () => {
  it('restores a resumed run: the stalest groups past capacity are pushed out, counted and settled', () => {
    const { f, counters } = feed({ capacity: 2 }, [group(0, 0), group(1, 1), group(2, 2)], 3);
    expect(f.buffer.size).toBe(2);
    expect(counters.replayOverflow).toBe(1);
    expect(f.takeSettled()).toEqual([0, 1]);
    expect(f.accepted).toBe(3 * 2 + 2);
  });

  it('drops groups more than η versions old, frees their place under the bound and settles their seqs', () => {
    const { f } = feed();
    f.accept(group(0, 0));
    f.accept(group(1, 3));
    expect(f.accepted).toBe(2);
    expect(f.dropStale(3, 1).map((g) => g.jobId)).toEqual([0]);
    expect(f.accepted).toBe(1);
    expect(f.takeSettled()).toEqual([0, 1]);
    expect(f.takeSettled()).toEqual([]);
  });

  it('FIFO: draws B groups once; a lost step puts them back, and one published leaves them out', () => {
    const { f } = feed();
    const rng = new Rng(1);
    f.accept(group(0, 0));
    expect(f.draw(rng)).toBeNull();
    f.accept(group(1, 0));
    const d = f.draw(rng);
    expect(d?.drawn.map((x) => x.item.jobId)).toEqual([0, 1]);
    expect(f.buffer.size).toBe(0);
    if (!d) return;
    f.lose(d.drawn, [9], d.undo);
    expect(f.buffer.size).toBe(2);
    expect(f.takeSettled()).toEqual([9]);
    expect(f.restore(true).map((g) => g.jobId)).toEqual([0, 1]); // published: not trained again
    expect(f.buffer.size).toBe(0);
  });

  it('prioritized: waits for B new groups, keeps trained ones, and a trained group that ages out is no drop', () => {
    const { f } = feed({ mode: 'prioritized' });
    const rng = new Rng(1);
    f.accept(group(0, 0));
    expect(f.draw(rng)).toBeNull();
    f.accept(group(1, 0));
    const d = f.draw(rng);
    expect(d?.drawn).toHaveLength(2);
    expect(f.buffer.size).toBe(2); // kept for reuse
    expect(f.draw(rng)).toBeNull(); // no new groups since
    expect(f.dropStale(5, 0)).toEqual([]); // both were trained: they retire
    expect(f.accepted).toBe(2);
  });

  it('prioritized: a lost step that was not published is undone, its groups counted new again', () => {
    const { f } = feed({ mode: 'prioritized' });
    const rng = new Rng(1);
    f.accept(group(0, 0));
    f.accept(group(1, 0));
    const d = f.draw(rng);
    if (!d) throw new Error('no draw');
    f.lose(d.drawn, [], d.undo);
    expect(f.restore(false)).toEqual([]);
    expect(f.draw(rng)?.drawn).toHaveLength(2); // B new groups again
    expect(f.dropStale(5, 0)).toHaveLength(0); // marked trained by the new draw
  });

  it('holds groups back as accepted and releases them into the buffer in job-id order', () => {
    const { f } = feed();
    f.hold(group(3, 0));
    f.hold(group(1, 0));
    expect(f.accepted).toBe(2); // the staleness bound counts them at once
    expect(f.heldGroups).toBe(2);
    expect(f.buffer.size).toBe(0);
    expect(f.draw(new Rng(1))).toBeNull(); // nothing to train on until they are released
    expect(f.release().map((g) => g.jobId)).toEqual([1, 3]);
    expect(f.heldGroups).toBe(0);
    expect(f.draw(new Rng(1))?.drawn.map((d) => d.key)).toEqual([1, 3]);
  });

  it('prioritized mode counts held groups towards the next batch only once they are released', () => {
    const { f } = feed({ mode: 'prioritized' });
    f.accept(group(0, 0));
    f.accept(group(1, 0));
    expect(f.draw(new Rng(1))).not.toBeNull();
    f.hold(group(3, 0));
    f.hold(group(2, 0));
    expect(f.draw(new Rng(1))).toBeNull(); // the trained groups are not drawn again before B new ones
    f.release();
    expect(f.draw(new Rng(1))?.drawn).toHaveLength(2);
  });
});

describe('releaseOrder', () => {
  it('orders groups by job id, whatever order they finished in', () => {
    const gs = [group(5, 0), group(2, 0), group(9, 0), group(0, 0)];
    expect(releaseOrder(gs).map((g) => g.jobId)).toEqual([0, 2, 5, 9]);
    expect(gs.map((g) => g.jobId)).toEqual([5, 2, 9, 0]); // the input is left as it was
  });
});
