import { LEVELS, type Level, type Task } from './suite';

/** Curriculum settings (DESIGN §3, seed 001). */
export interface CurriculumConfig {
  /** Off: train on every level at once. */
  enabled: boolean;
  /** Episodes of the current level the success rate is measured over. */
  window: number;
  /** Promote to the next level when the success rate over a full window reaches this. */
  promoteAt: number;
}

export const DEFAULT_CURRICULUM: CurriculumConfig = { enabled: true, window: 20, promoteAt: 0.7 };

/** What the page shows of the curriculum. */
export interface CurriculumView {
  enabled: boolean;
  level: Level;
  /** Success rate over the last `window` episodes of the level (null before any). */
  rate: number | null;
  /** Episodes counted in `rate`. */
  seen: number;
  /** Levels promoted from, in order, with the episode count at promotion. */
  promotions: { from: Level; to: Level; episode: number }[];
}

/** What a resumed run needs of the curriculum (saved with every version). */
export interface CurriculumSnapshot {
  levelIndex: number;
  recent: boolean[];
  episodes: number;
  /** Promotions so far (absent in runs stored before they were kept). */
  promotions?: CurriculumView['promotions'];
}

/**
 * easy → medium → hard: promote when the last `window` episodes of a level succeed ≥ `promoteAt`.
 * Levels no training task has are skipped (a suite of the user's may hold medium tasks only).
 */
export class Curriculum {
  /** Index of the current level in `LEVELS`. */
  private levelIndex: number;
  private recent: boolean[] = [];
  private episodes = 0;
  private readonly promotions: CurriculumView['promotions'] = [];
  /** The levels it walks through, in order: those of the training tasks (every level if none given). */
  private readonly levels: readonly Level[];

  constructor(
    readonly config: CurriculumConfig = DEFAULT_CURRICULUM,
    levels: readonly Level[] = LEVELS,
  ) {
    if (!Number.isInteger(config.window) || config.window < 1)
      throw new Error(`curriculum window must be a positive integer, got ${config.window}`);
    if (!(config.promoteAt > 0 && config.promoteAt <= 1))
      throw new Error(`curriculum promoteAt must be in (0, 1], got ${config.promoteAt}`);
    const present = LEVELS.filter((l) => levels.includes(l));
    this.levels = present.length ? present : LEVELS;
    this.levelIndex = LEVELS.indexOf(this.levels[0] ?? 'easy');
  }

  /** The level after the current one that has tasks, or null at the last. */
  private get next(): Level | null {
    return this.levels.find((l) => LEVELS.indexOf(l) > this.levelIndex) ?? null;
  }

  get level(): Level {
    return LEVELS[this.levelIndex] ?? 'hard';
  }

  /** The tasks to train on now: the current level's, or all of them when off. */
  tasksFor<T extends Task>(tasks: readonly T[]): T[] {
    if (!this.config.enabled) return [...tasks];
    const atLevel = tasks.filter((t) => t.level === this.level);
    return atLevel.length > 0 ? atLevel : [...tasks];
  }

  /** Records one finished training episode; returns the new level when this promoted. */
  record(level: Level, solved: boolean): Level | null {
    this.episodes += 1;
    if (!this.config.enabled || level !== this.level) return null;
    this.recent.push(solved);
    if (this.recent.length > this.config.window) this.recent.shift();
    const full = this.recent.length === this.config.window;
    const next = this.next;
    if (!full || this.rate() < this.config.promoteAt || next === null) return null;
    const from = this.level;
    this.levelIndex = LEVELS.indexOf(next);
    this.recent = [];
    this.promotions.push({ from, to: this.level, episode: this.episodes });
    return this.level;
  }

  private rate(): number {
    return this.recent.filter(Boolean).length / Math.max(1, this.recent.length);
  }

  /** What a resumed run needs to continue where it stopped. */
  snapshot(): CurriculumSnapshot {
    return {
      levelIndex: this.levelIndex,
      recent: [...this.recent],
      episodes: this.episodes,
      promotions: this.promotions.map((p) => ({ ...p })),
    };
  }

  /** Continues from a snapshot (a resumed run); one stored before promotions were kept has none. */
  restore(s: CurriculumSnapshot): void {
    const index = Math.max(0, Math.min(LEVELS.length - 1, Math.floor(s.levelIndex)));
    // A level without tasks is not one to stay on: the first of the walk's levels at or past it.
    const at = this.levels.find((l) => LEVELS.indexOf(l) >= index) ?? this.levels[this.levels.length - 1];
    this.levelIndex = LEVELS.indexOf(at ?? 'hard');
    this.recent = s.recent.slice(-this.config.window);
    this.episodes = s.episodes;
    this.promotions.splice(0, this.promotions.length, ...(s.promotions ?? []).map((p) => ({ ...p })));
  }

  /** Index of the current level in easy → medium → hard. */
  get levelIndexNow(): number {
    return this.levelIndex;
  }

  view(): CurriculumView {
    return {
      enabled: this.config.enabled,
      level: this.level,
      rate: this.recent.length ? this.rate() : null,
      seen: this.recent.length,
      promotions: [...this.promotions],
    };
  }
}
