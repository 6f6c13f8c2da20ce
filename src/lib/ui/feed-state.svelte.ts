import type { PlayedListener, PipelineSession } from '../run/session';
import {
  FeedAnnouncer,
  feedEpisodes,
  ProgramFeed,
  versionRange,
  type BestProgram,
  type FeedEpisode,
  type FeedLimits,
  type LevelFilter,
} from '../view/program-feed';

export type { BestProgram, FeedEpisode, LevelFilter };

/** What the feed follows of a run's session: its id and the groups its controller takes. */
export type FeedSource = Pick<PipelineSession, 'runId' | 'onPlayed'>;

/** How often the feed's view follows the episodes arriving, ms (a run plays several a second). */
const REFRESH_MS = 300;

/**
 * The program feed's view state: the newest finished episodes of the code run shown (filtered by
 * level), the pins, the best-program table, and what a screen reader is told. The feed
 * (`ProgramFeed`) does the bookkeeping; this class follows the run's session and shows it.
 */
export class FeedState {
  /** The episodes shown, newest first (pinned ones stay where they arrived). */
  episodes = $state.raw<FeedEpisode[]>([]);
  best = $state.raw<BestProgram[]>([]);
  /** Keys of the pinned episodes. */
  pinned = $state.raw<readonly string[]>([]);
  level = $state<LevelFilter>('all');
  /** Episodes seen since the run started. */
  seen = $state(0);
  /** Lowest and highest version that wrote the shown episodes (their colour scale), or null. */
  range = $state.raw<{ lo: number; hi: number } | null>(null);
  /** The polite live region's text: a count of new episodes, not more often than every 10 s. */
  announcement = $state('');
  /** The run whose episodes these are. */
  runId = $state<string | null>(null);

  private readonly feed: ProgramFeed;
  private readonly announcer = new FeedAnnouncer();
  private unsubscribe: (() => void) | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private arrivedSinceRefresh = 0;

  constructor(
    limits?: FeedLimits,
    private readonly clock: () => number = () => performance.now(),
    private readonly refreshMs = REFRESH_MS,
  ) {
    this.feed = new ProgramFeed(limits);
  }

  /**
   * Follows a run's session (null: the run stopped; what it showed stays). A session of another run
   * starts an empty feed; a resumed session of the same run goes on with it. Returns `session`.
   */
  follow<S extends FeedSource | null>(session: S): S {
    this.unsubscribe?.();
    this.unsubscribe = null;
    if (!session) return session;
    if (session.runId !== this.runId) {
      this.feed.clear();
      this.runId = session.runId;
      this.refresh();
    }
    this.unsubscribe = session.onPlayed(this.played);
    return session;
  }

  /** Shows the episodes at `level` only ('all': every level). */
  setLevel(level: LevelFilter): void {
    this.level = level;
    this.refresh();
  }

  /** Pins an episode (it stays as newer ones arrive) or unpins it. False when a pin was refused (too many pins). */
  togglePin(key: string): boolean {
    let ok = true;
    if (this.feed.isPinned(key)) this.feed.unpin(key);
    else ok = this.feed.pin(key);
    this.refresh();
    return ok;
  }

  /** Pins at most this many episodes. */
  get maxPinned(): number {
    return this.feed.limits.maxPinned;
  }

  /**
   * Shows a stored version's greedy episode (`FeedEpisode.replay`) at the top of the feed, pinned
   * while pins are left: a running run's episodes would push it out within seconds. An episode of
   * another run than the one shown starts an empty feed of that run.
   */
  showReplay(episode: FeedEpisode, runId: string): void {
    if (runId !== this.runId) {
      this.feed.clear();
      this.runId = runId;
    }
    this.feed.add([episode]);
    this.feed.pin(episode.key);
    this.refresh();
  }

  /** Lets go of the session and the pending refresh. */
  dispose(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    clearTimeout(this.timer);
  }

  private readonly played: PlayedListener = (job, group, lane) => {
    const episodes = feedEpisodes(job, group, lane);
    this.feed.add(episodes);
    this.arrivedSinceRefresh += episodes.length;
    this.timer ??= setTimeout(() => this.refresh(), this.refreshMs);
  };

  /** Shows the feed as it is now. */
  private refresh(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.episodes = this.feed.list(this.level);
    this.best = this.feed.bestPrograms();
    this.pinned = this.feed.pins();
    this.seen = this.feed.seen;
    this.range = versionRange(this.episodes);
    const message = this.announcer.arrived(this.arrivedSinceRefresh, this.clock());
    this.arrivedSinceRefresh = 0;
    if (message) this.announcement = message;
  }
}
