/**
 * The groups between the rollouts and the trainer (DESIGN §5, §6): the replay buffer, the groups
 * accepted under the staleness bound, which groups were trained (prioritized mode keeps them),
 * the seqs of groups dropped untrained, and the batch a trainer that died was computing.
 */
import type { Rng } from '../random';
import { ReplayBuffer, type Drawn } from '../rl/replay';
import type { PipelineConfig, PipelineCounters } from './controller-types';
import { isStale } from './staleness';
import type { EpisodeOutcome, PlayedGroup } from './types';
import { SeqLedger } from './ledger';

/** What a draw changed, undone when its step is lost: keys it marked trained, and `fresh` it took. */
export interface DrawUndo {
  marked: number[];
  fresh: number;
}

/** Where a resumed run stands: its latest version and its unconsumed groups. */
export interface RestoredGroups<T extends EpisodeOutcome> {
  version: number;
  groups: PlayedGroup<T>[];
  /** Stored seqs no group takes (superseded attempts): marked consumed with the next version. */
  superseded?: readonly number[];
}

/** Finished groups in the order they enter the buffer: by job id (ids are unique within a run). */
export function releaseOrder<G extends { jobId: number }>(groups: readonly G[]): G[] {
  return [...groups].sort((a, b) => a.jobId - b.jobId);
}

/** The replay side of the pipeline controller. */
export class ReplayFeed<T extends EpisodeOutcome> {
  readonly buffer: ReplayBuffer<PlayedGroup<T>>;
  /** Groups finished and kept for training (stale drops excluded). */
  accepted: number;
  /**
   * Seqs of groups dropped untrained (stale, or pushed out of a full buffer). They are marked
   * consumed with the next published version, so a resumed run does not bring them back.
   */
  private settled: number[] = [];
  /** The batch the trainer was computing when it died, and what its draw changed. */
  private lostBatch: PlayedGroup<T>[] = [];
  private lostUndo: DrawUndo = { marked: [], fresh: 0 };
  /** Groups accepted since the last batch was drawn (prioritized mode trains once per B new groups). */
  private fresh = 0;
  /**
   * Prioritized mode: the buffered groups already trained on (they stay, to be drawn again). One
   * that leaves the buffer (stale, pushed out) simply retires: it was accepted and trained, so it
   * stays counted in `accepted` and is no stale drop. Only groups never trained leave `accepted`.
   */
  private readonly trainedKeys = new Set<number>();
  /** Each episode of the session by seq: written, trained, stale-dropped, pushed out. */
  readonly ledger = new SeqLedger();
  /** Groups accepted but held back from the buffer until `release` (η = 0: job-id order). */
  private held: PlayedGroup<T>[] = [];

  constructor(
    private readonly config: Pick<PipelineConfig, 'replay' | 'batchGroups'>,
    private readonly counters: PipelineCounters,
    restored: RestoredGroups<T>,
  ) {
    this.buffer = new ReplayBuffer(config.replay);
    this.settled.push(...(restored.superseded ?? []));
    // More unconsumed groups than the buffer holds (unbounded η): the stalest are pushed out, as
    // they would have been in the run, counted, and marked consumed with the next version.
    let kept = restored.groups.length;
    for (const g of restored.groups) {
      this.written(g);
      for (const out of this.buffer.add(g.jobId, g)) {
        this.settled.push(...out.seqs);
        for (const s of out.seqs) this.ledger.overflowed.add(s);
        kept -= 1;
        this.counters.replayOverflow += 1;
      }
    }
    this.fresh = kept;
    // The unconsumed groups were accepted under the versions before this one.
    this.accepted = restored.version * config.batchGroups + kept;
  }

  /** Seqs of groups dropped untrained since they were last taken; clears them. */
  takeSettled(): number[] {
    const out = this.settled;
    this.settled = [];
    return out;
  }

  /**
   * A finished group is kept for training. A full buffer pushes out its oldest groups
   * (unbounded η): one never trained on is like a stale drop, counted as an overflow.
   */
  accept(group: PlayedGroup<T>): void {
    this.accepted += 1;
    this.written(group);
    this.enqueue(group);
  }

  /**
   * A finished group is kept for training but held back from the buffer until `release`: it
   * counts as accepted at once (the staleness bound sees it), yet the buffer's order is the jobs'
   * order, not the order in which they happened to finish (η = 0: a reproducible batch).
   */
  hold(group: PlayedGroup<T>): void {
    this.accepted += 1;
    this.written(group);
    this.held.push(group);
  }

  /** Records a stored group's seqs as written (`accept` and `hold` do; a group that came in after Stop alone). */
  written(group: PlayedGroup<T>): void {
    for (const s of group.seqs) this.ledger.written.add(s);
  }

  /** Groups held back (`hold`), not yet in the buffer. */
  get heldGroups(): number {
    return this.held.length;
  }

  /** Moves the held groups into the buffer in job-id order; returns them in that order. */
  release(): PlayedGroup<T>[] {
    const out = releaseOrder(this.held);
    this.held = [];
    for (const g of out) this.enqueue(g);
    return out;
  }

  /** Adds an accepted group to the buffer: a full buffer pushes out its oldest (an overflow if never trained). */
  private enqueue(group: PlayedGroup<T>): void {
    this.fresh += 1;
    for (const g of this.buffer.add(group.jobId, group)) {
      if (!this.leftUntrained(g)) continue;
      this.counters.replayOverflow += 1;
      for (const s of g.seqs) this.ledger.overflowed.add(s);
    }
  }

  /** Removes the groups more than η versions old at `version`; returns those never trained (stale drops). */
  dropStale(version: number, eta: number): PlayedGroup<T>[] {
    const dropped = this.buffer.removeWhere((g) => isStale(version, g.oldestVersion, eta));
    // A trained group ages out of the prioritized buffer: it retires, no stale drop.
    const stale = dropped.filter((g) => this.leftUntrained(g));
    for (const g of stale) for (const s of g.seqs) this.ledger.staleDropped.add(s);
    return stale;
  }

  /**
   * The next batch of B groups, or null: none ready (prioritized mode waits for B new groups).
   * With the draw, what undoes it if its step is lost.
   */
  draw(rng: Rng): { drawn: Drawn<PlayedGroup<T>>[]; undo: DrawUndo } | null {
    const B = this.config.batchGroups;
    if (this.config.replay.mode === 'prioritized' && this.fresh < B) return null;
    const drawn = this.buffer.draw(B, rng);
    if (!drawn) return null;
    const undo = { marked: this.markTrained(drawn.map((d) => d.key)), fresh: Math.min(this.fresh, B) };
    this.fresh -= undo.fresh;
    return { drawn, undo };
  }

  /** The trainer died computing `drawn`: the batch goes back to the front of the buffer. */
  lose(drawn: readonly Drawn<PlayedGroup<T>>[], settled: readonly number[], undo: DrawUndo): void {
    this.buffer.unshift(drawn.map((d) => ({ key: d.key, item: d.item })));
    this.settled.unshift(...settled); // marking twice is harmless
    this.lostBatch = drawn.map((d) => d.item);
    this.lostUndo = undo;
  }

  /**
   * The trainer came back. `published`: the lost step was published before it died (its samples
   * marked consumed), so its batch leaves the buffer as trained; returns that batch. Otherwise
   * its draw never happened (in prioritized mode its groups are not trained, and the new groups
   * it took count again towards the next batch); returns nothing.
   */
  restore(published: boolean): PlayedGroup<T>[] {
    const trained = published ? this.lostBatch : [];
    if (published) {
      const lost = new Set(trained.map((g) => g.jobId));
      if (this.config.replay.mode === 'fifo') this.buffer.removeWhere((g) => lost.has(g.jobId));
      this.markTrained([...lost]);
    } else {
      for (const k of this.lostUndo.marked) this.trainedKeys.delete(k);
      this.fresh += this.lostUndo.fresh;
    }
    this.lostBatch = [];
    this.lostUndo = { marked: [], fresh: 0 };
    return trained;
  }

  /**
   * A group left the buffer (stale, or pushed out): one never trained on leaves `accepted` (its
   * slot under the staleness bound is free again) and its samples are marked consumed with the
   * next version; true for such a group. A trained one just retires (false).
   */
  private leftUntrained(g: PlayedGroup<T>): boolean {
    if (this.trainedKeys.delete(g.jobId)) return false;
    this.accepted -= 1;
    this.settled.push(...g.seqs);
    return true;
  }

  /**
   * Prioritized mode keeps trained groups: it remembers which they are (`trainedKeys`), from the
   * draw on (a group pushed out while its step computes was trained). Returns the keys it added.
   */
  private markTrained(keys: readonly number[]): number[] {
    if (this.config.replay.mode !== 'prioritized') return [];
    const added = keys.filter((k) => !this.trainedKeys.has(k));
    for (const k of added) this.trainedKeys.add(k);
    return added;
  }
}
