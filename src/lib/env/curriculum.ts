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
  /** Results counted in `rate`: the newest `window` episodes of each task at most. */
  seen: number;
  /** Training tasks of the level, and how many of them have been played since the level began. */
  tasks: number;
  tried: number;
  /** The settings it promotes by. */
  window: number;
  promoteAt: number;
  /** Levels promoted from, in order, with the episode count at promotion. */
  promotions: { from: Level; to: Level; episode: number }[];
  /** The level it would promote to (null at the last level of the run's tasks: it stays). */
  next: Level | null;
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

/** True for a promotion as a snapshot stores it. */
function isPromotion(p: unknown): p is CurriculumView['promotions'][number] {
  if (typeof p !== 'object' || p === null) return false;
  const { from, to, episode } = p as Record<string, unknown>;
  return LEVELS.includes(from as Level) && LEVELS.includes(to as Level) && Number.isFinite(episode);
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
  /** Solved results in `results`, over every task. */
  private solved = 0;
  private episodes = 0;
  private readonly promotions: CurriculumView['promotions'] = [];
  /** The levels it walks through, in order: those of the training tasks. */
  private readonly levels: readonly Level[];
  /** The training tasks of each level (the denominator of its rate). */
  private readonly taskIds = new Map<Level, Set<string>>();

  constructor(
    readonly config: CurriculumConfig,
    /** The training tasks: the levels to walk and each level's tasks. */
    tasks: readonly Pick<Task, 'id' | 'level'>[],
  ) {
    if (tasks.length === 0) throw new Error('the curriculum needs the training tasks, and has none');
    if (!Number.isInteger(config.window) || config.window < 1)
      throw new Error(`curriculum window must be a positive integer, got ${config.window}`);
    if (!(config.promoteAt > 0 && config.promoteAt <= 1))
      throw new Error(`curriculum promoteAt must be in (0, 1], got ${config.promoteAt}`);
    for (const t of tasks) {
      const ids = this.taskIds.get(t.level) ?? new Set<string>();
      ids.add(t.id);
      this.taskIds.set(t.level, ids);
    }
    this.levels = LEVELS.filter((l) => this.taskIds.has(l));
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
    if (solved) this.solved += 1;
    if (r.length > this.config.window && r.shift()) this.solved -= 1;
    this.results.set(taskId, r);
    const next = this.next;
    if (next === null || this.rate() < this.config.promoteAt) return null;
    const from = this.level;
    this.levelIndex = LEVELS.indexOf(next);
    this.results = new Map();
    this.solved = 0;
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
    return this.solved / Math.max(1, this.levelTasks().size * this.config.window);
  }

  /** What a resumed run needs to continue where it stopped. */
  snapshot(): CurriculumSnapshot {
    return {
      levelIndex: this.levelIndex,
      // Built whole, so that a task id such as `__proto__` is an entry like any other.
      results: Object.fromEntries(
        [...this.results].map(([id, r]) => [id, r.map((s) => (s ? '1' : '0')).join('')]),
      ),
      episodes: this.episodes,
      promotions: this.promotions.map((p) => ({ ...p })),
    };
  }

  /**
   * Continues from a snapshot (a resumed run); one stored before promotions were kept has none.
   * What a stored record holds is read with care: a level index that is no number starts at the
   * first level, and results other than a string of 0s and 1s are left out.
   */
  restore(s: CurriculumSnapshot): void {
    const stored = Number.isFinite(s.levelIndex) ? Math.floor(s.levelIndex) : 0;
    const index = Math.max(0, Math.min(LEVELS.length - 1, stored));
    // A level without tasks is not one to stay on: the first of the walk's levels at or past it.
    const at = this.levels.find((l) => LEVELS.indexOf(l) >= index) ?? this.levels[this.levels.length - 1];
    this.levelIndex = LEVELS.indexOf(at ?? 'hard');
    this.results = new Map();
    this.solved = 0;
    // Only results of the level's tasks, and only while the level is the one they were counted on.
    const results: unknown = s.results;
    if (this.levelIndex === index && typeof results === 'object' && results !== null) {
      const tasks = this.levelTasks();
      for (const [id, text] of Object.entries(results)) {
        if (!tasks.has(id) || typeof text !== 'string' || !/^[01]+$/.test(text)) continue;
        const r = [...text.slice(-this.config.window)].map((ch) => ch === '1');
        this.results.set(id, r);
        this.solved += r.filter(Boolean).length;
      }
    }
    this.episodes = Number.isFinite(s.episodes) ? s.episodes : 0;
    const promotions: unknown = s.promotions;
    this.promotions.splice(
      0,
      this.promotions.length,
      ...(Array.isArray(promotions) ? promotions.filter(isPromotion).map((p) => ({ ...p })) : []),
    );
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
      next: this.next,
    };
  }
}
