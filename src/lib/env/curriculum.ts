import { LEVELS, type Level, type Task } from './suite';

/** Curriculum settings (DESIGN §3, seed 001). */
export interface CurriculumConfig {
  /** Off: train on every level at once. */
  enabled: boolean;
  /** Newest episodes of each task of the level that its success rate is measured over. */
  window: number;
  /** Promote to the next level when the level's success rate reaches this. */
  promoteAt: number;
}

export const DEFAULT_CURRICULUM: CurriculumConfig = { enabled: true, window: 20, promoteAt: 0.7 };

/** What the page shows of the curriculum. */
export interface CurriculumView {
  enabled: boolean;
  level: Level;
  /** The level's success rate (`Curriculum.rate`; null before any episode of the level). */
  rate: number | null;
  /** Episodes of the level counted in `rate` (at most `window` per task). */
  seen: number;
  /** Training tasks of the level, and how many of them have been played since the level began. */
  tasks: number;
  tried: number;
  /** The settings it promotes by. */
  window: number;
  promoteAt: number;
  /** Levels promoted from, in order, with the episode count at promotion. */
  promotions: { from: Level; to: Level; episode: number }[];
}

/** What a resumed run needs of the curriculum (saved with every version). */
export interface CurriculumSnapshot {
  levelIndex: number;
  /**
   * The newest results of each task of the level, oldest first, as '1' (solved) and '0'. Absent
   * in runs stored by builds that kept one window for the whole level: those begin the level's
   * count again.
   */
  results?: Record<string, string>;
  /** The whole level's window of builds before `results` (read as nothing). */
  recent?: boolean[];
  episodes: number;
  /** Promotions so far (absent in runs stored before they were kept). */
  promotions?: CurriculumView['promotions'];
}

/**
 * easy → medium → hard (seed 001: promote at a success rate of 0.7 over a window of 20). The
 * seed draws a level's tasks uniformly, one episode each, so its window of the level's last 20
 * episodes estimates the success on a task of the level. Here jobs are not uniform: the scheduler
 * prefers tasks near a success rate of 0.5 (DESIGN §6) and a job plays its task 4 times, so the
 * last 20 episodes are ~5 tasks the scheduler chose, and one lucky window among the thousands a
 * level slides through promoted a policy that solved a quarter of its tasks (in the page, easy →
 * medium after ~700 episodes and medium → hard after ~8 500, greedy success there 0.27 and ~0.2).
 * So the level's rate is the mean over **every** training task of the level of that task's
 * success over its newest `window` episodes, an episode not played yet counting as a failure:
 * the policy's success on a task of the level drawn uniformly, measured over each task.
 * Levels no training task has are skipped (a suite of the user's may hold medium tasks only).
 */
export class Curriculum {
  /** Index of the current level in `LEVELS`. */
  private levelIndex: number;
  /** Newest results (at most `window`) of each task of the current level played since it began. */
  private results = new Map<string, boolean[]>();
  private episodes = 0;
  private readonly promotions: CurriculumView['promotions'] = [];
  /** The levels it walks through, in order: those of the training tasks (every level if none given). */
  private readonly levels: readonly Level[];
  /** The training tasks of each level (the denominator of its rate). */
  private readonly taskIds = new Map<Level, Set<string>>();

  constructor(
    readonly config: CurriculumConfig = DEFAULT_CURRICULUM,
    tasks: readonly Pick<Task, 'id' | 'level'>[] = [],
  ) {
    if (!Number.isInteger(config.window) || config.window < 1)
      throw new Error(`curriculum window must be a positive integer, got ${config.window}`);
    if (!(config.promoteAt > 0 && config.promoteAt <= 1))
      throw new Error(`curriculum promoteAt must be in (0, 1], got ${config.promoteAt}`);
    for (const t of tasks) {
      const ids = this.taskIds.get(t.level) ?? new Set<string>();
      ids.add(t.id);
      this.taskIds.set(t.level, ids);
    }
    const present = LEVELS.filter((l) => this.taskIds.has(l));
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

  /**
   * Records one finished training episode of task `taskId`; returns the new level when this
   * promoted. Episodes of another level, or of a task the curriculum was not given, are counted
   * as episodes only.
   */
  record(taskId: string, level: Level, solved: boolean): Level | null {
    this.episodes += 1;
    if (!this.config.enabled || level !== this.level || !this.levelTasks().has(taskId)) return null;
    const r = this.results.get(taskId) ?? [];
    r.push(solved);
    if (r.length > this.config.window) r.shift();
    this.results.set(taskId, r);
    const next = this.next;
    if (next === null || this.rate() < this.config.promoteAt) return null;
    const from = this.level;
    this.levelIndex = LEVELS.indexOf(next);
    this.results = new Map();
    this.promotions.push({ from, to: this.level, episode: this.episodes });
    return this.level;
  }

  private levelTasks(): ReadonlySet<string> {
    return this.taskIds.get(this.level) ?? new Set();
  }

  /**
   * The level's success rate: over every training task of the level, the solved share of its
   * newest `window` episodes, where episodes not played yet count as failures.
   */
  rate(): number {
    const n = this.levelTasks().size;
    if (n === 0) return 0;
    let solved = 0;
    for (const r of this.results.values()) solved += r.filter(Boolean).length;
    return solved / (n * this.config.window);
  }

  /** What a resumed run needs to continue where it stopped. */
  snapshot(): CurriculumSnapshot {
    const results: Record<string, string> = {};
    for (const [id, r] of this.results) results[id] = r.map((s) => (s ? '1' : '0')).join('');
    return {
      levelIndex: this.levelIndex,
      results,
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
    this.results = new Map();
    // Only results of the level's tasks, and only while the level is the one they were counted on.
    if (LEVELS.indexOf(at ?? 'hard') === index) {
      const tasks = this.levelTasks();
      for (const [id, text] of Object.entries(s.results ?? {})) {
        if (!tasks.has(id) || typeof text !== 'string') continue;
        const r = [...text].slice(-this.config.window).map((ch) => ch === '1');
        if (r.length) this.results.set(id, r);
      }
    }
    this.episodes = s.episodes;
    this.promotions.splice(0, this.promotions.length, ...(s.promotions ?? []).map((p) => ({ ...p })));
  }

  /** Index of the current level in easy → medium → hard. */
  get levelIndexNow(): number {
    return this.levelIndex;
  }

  view(): CurriculumView {
    let seen = 0;
    for (const r of this.results.values()) seen += r.length;
    return {
      enabled: this.config.enabled,
      level: this.level,
      rate: seen ? this.rate() : null,
      seen,
      tasks: this.levelTasks().size,
      tried: this.results.size,
      window: this.config.window,
      promoteAt: this.config.promoteAt,
      promotions: [...this.promotions],
    };
  }
}
