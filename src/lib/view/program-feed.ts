/**
 * The program feed (pure): the newest finished episodes of a code run, each turn's program with
 * the policy version that wrote every token, what the sandbox answered (on a tool-use task, the
 * test report the policy read next), and per task the best program found so far. Bounded whatever the run's length: `limit` recent episodes, `maxPinned`
 * pinned ones, `maxTasks` rows of the best-program table.
 */
import type { TurnRecord } from '../env/episode';
import type { EvalSplit } from '../env/evaluate';
import { kindOf, LEVELS, type Example, type Level, type Task } from '../env/suite';
import { parseTestReport, type TestReport } from '../env/test-report';
import { RUN, SEP, SUBMIT, tokenId, tokenText } from '../env/vocab';
import type { PlayedGroup, RolloutJob } from '../pipeline/types';
import { count } from '../plural';
import { isRelabelledTask } from '../rl/hindsight';
import type { Trajectory } from '../rl/trajectory';
import { taskName } from './task-name';

/** One token the policy wrote and the version of the policy that sampled it. */
export interface FeedToken {
  text: string;
  version: number;
}

/** One turn of an episode: the program, how it ended, and what the sandbox answered. */
export interface FeedTurn {
  action: 'run' | 'submit';
  /** The program's tokens, in order, each with the version that wrote it. */
  tokens: FeedToken[];
  /** The control token (`<run>` or `<submit>`) that ended the turn. */
  control: FeedToken;
  program: string;
  /** The program's outputs on the turn's tests, when every call returned a finite number. */
  outputs?: number[];
  /** The sandbox's error kind when it did not (syntax, runtime, timeout, memory, output, internal). */
  error?: string;
  /**
   * The outputs the tests expect, in order: for a run the shown examples (a tool-use task's own
   * tests), for a submit the hidden tests.
   */
  expected: number[];
  /**
   * A run of a tool-use task: the test report the sandbox answered, as the policy read it in its
   * next observation (tests passed of the total, the first failing ones). Absent when the context
   * had no room left for it (the episode ended there).
   */
  report?: TestReport;
  /** Whether the program differs from the previous turn's (absent on the first turn). */
  revised?: boolean;
  /**
   * After a run that failed tests: how many more of them this turn's program passes (its own
   * run's report, or all of them when it is a solving submit). Absent when it passes no more.
   */
  fixed?: number;
  /** Hidden tests passed (a submit). */
  passed?: number;
  /** Reward paid at the turn's control token. */
  reward: number;
  /**
   * The value head's estimate V at the turn's start (the state its first token was sampled in),
   * when the trajectory recorded one.
   */
  value?: number;
}

/** One finished episode as the feed shows it. */
export interface FeedEpisode {
  /** Unique within a run: the store key (seq) of its trajectory. */
  key: string;
  jobId: number;
  taskId: string;
  /** The task as the page names it: its id, or what a relabelled task asks for (`taskName`). */
  name: string;
  level: Level;
  /** The examples shown to the policy in its observation. */
  examples: Example[];
  turns: FeedTurn[];
  /** The episode's return. */
  reward: number;
  solved: boolean;
  /** The rollout worker's lane that played it. */
  lane: string;
  /** Versions that wrote its tokens, ascending: more than one when it adopted a new version mid-way. */
  versions: number[];
  /**
   * A stored version played greedily on a chosen task (behaviour at a checkpoint), not an episode
   * of the run: the version and the task's split. Such an episode never enters the best-program
   * table nor the count of episodes seen, and shows whatever the level filter.
   */
  replay?: { version: number; split: EvalSplit };
}

/** Per task, the best program found so far. */
export interface BestProgram {
  taskId: string;
  level: Level;
  /** The program of the best episode's last turn (what it submitted). */
  program: string;
  /** The best episode's return; ties go to the shorter program, then to the earlier one. */
  reward: number;
  solved: boolean;
  /** The newest version that wrote the best episode. */
  version: number;
  /** The version that first solved the task (the lowest finishing version of a solving episode), or null. */
  firstSolved: number | null;
  /** Episodes of the task seen. */
  episodes: number;
}

/** Level shown by the feed's filter. */
export type LevelFilter = Level | 'all';

/** How much the feed keeps. */
export interface FeedLimits {
  /** Newest episodes kept (pinned ones aside). */
  limit: number;
  /** Pinned episodes kept at most: a pin past this is refused. */
  maxPinned: number;
  /** Tasks the best-program table holds at most (later new tasks are not added). */
  maxTasks: number;
}

export const DEFAULT_FEED_LIMITS: FeedLimits = { limit: 50, maxPinned: 20, maxTasks: 500 };

const F_OPEN = tokenId('f(');

/**
 * The episodes of a finished group as the feed shows them: `job` gives the task (its examples and
 * hidden tests), `group.turns` what the sandbox answered (a group without them shows programs only).
 */
export function feedEpisodes(
  job: Pick<RolloutJob, 'task'>,
  group: Pick<PlayedGroup<Trajectory>, 'jobId' | 'trajectories' | 'seqs' | 'turns'>,
  lane: string,
): FeedEpisode[] {
  return group.trajectories.map((tr, i) => {
    const promptEnd = tr.tokens.indexOf(SEP);
    const shown = tr.tokens.slice(0, promptEnd).filter((t) => t === F_OPEN).length;
    const examples = job.task.examples.slice(0, shown);
    const records = group.turns?.[i] ?? [];
    const turns = splitTurns(tr).map((t, k, all) => {
      const turn = withAnswer(t, records[k], examples, job.task);
      if (k > 0) turn.revised = t.program !== all[k - 1]?.program;
      return turn;
    });
    turns.forEach((turn, k) => {
      const fixed = k > 0 ? fixedBy(turns[k - 1], turn) : undefined;
      if (fixed !== undefined) turn.fixed = fixed;
    });
    const versions = [...new Set(tr.versions.filter((v, j) => v >= 0 && tr.owned[j] === 1))];
    return {
      key: String(group.seqs[i] ?? `${group.jobId}:${i}`),
      jobId: group.jobId,
      taskId: tr.taskId,
      name: taskName(tr.taskId, job.task),
      level: tr.level,
      examples,
      turns,
      reward: tr.return,
      solved: tr.solved,
      lane,
      versions: versions.sort((a, b) => a - b),
    };
  });
}

type BareTurn = Pick<FeedTurn, 'action' | 'tokens' | 'control' | 'program' | 'reward' | 'value'> & {
  /** The observation tokens the environment answered the turn with (none after a submit). */
  answer: number[];
};

/**
 * The policy's tokens of a trajectory, turn by turn: each turn ends at its control token, and
 * the environment's tokens up to the next turn are its answer.
 */
function splitTurns(tr: Trajectory): BareTurn[] {
  const turns: BareTurn[] = [];
  let tokens: FeedToken[] = [];
  /** Where the turn being read started: its first policy token. */
  let start = -1;
  tr.tokens.forEach((id, i) => {
    if (tr.owned[i] !== 1) {
      turns.at(-1)?.answer.push(id); // before the first turn: the prompt, no turn's answer
      return;
    }
    if (start < 0) start = i;
    const token = { text: tokenText(id), version: tr.versions[i] ?? -1 };
    if (id !== RUN && id !== SUBMIT) {
      tokens.push(token);
      return;
    }
    const program = tokens.map((t) => t.text).join('');
    const action = id === RUN ? 'run' : 'submit';
    const value = tr.values[start];
    turns.push({
      action,
      tokens,
      control: token,
      program,
      reward: tr.rewards[i] ?? 0,
      answer: [],
      ...(value !== undefined && Number.isFinite(value) ? { value } : {}),
    });
    [tokens, start] = [[], -1];
  });
  return turns;
}

/** The test report in a run's answer tokens, or undefined (none, or not a report). */
function reportOf(answer: readonly number[]): TestReport | undefined {
  if (answer.length === 0) return undefined;
  try {
    return parseTestReport(answer);
  } catch {
    return undefined;
  }
}

/**
 * A turn with what the sandbox answered (its record; on a tool-use task, the report it read back)
 * and the outputs its tests expect.
 */
function withAnswer(
  { answer, ...turn }: BareTurn,
  record: TurnRecord | undefined,
  shown: readonly Example[],
  task: Task,
): FeedTurn {
  const toolUse = kindOf(task) === 'tooluse';
  const tests = turn.action === 'submit' ? task.hidden : toolUse ? (task.tests ?? shown) : shown;
  const out: FeedTurn = { ...turn, expected: tests.map((t) => t.output) };
  if (toolUse && turn.action === 'run') {
    const report = reportOf(answer);
    if (report) out.report = report;
  }
  if (!record || record.program !== turn.program) return out; // not this turn's answer: none shown
  if (record.outputs) out.outputs = record.outputs;
  if (record.error) out.error = record.error;
  if (record.passed !== undefined) out.passed = record.passed;
  out.reward = record.reward;
  return out;
}

/**
 * Tests a turn's program passed of those its answer checked: a run's report (an error fails every
 * test), else a run's outputs against the shown examples; undefined for a submit or no answer.
 */
function testsOf(t: FeedTurn): { passed: number; total: number } | undefined {
  if (t.action !== 'run') return undefined;
  if (t.report) return { passed: t.report.error ? 0 : t.report.passed, total: t.report.total };
  const total = t.expected.length;
  if (t.error && total > 0) return { passed: 0, total };
  if (!t.outputs || total === 0) return undefined;
  return { passed: t.outputs.filter((y, i) => y === t.expected[i]).length, total };
}

/**
 * How many failing tests of run `before` turn `t` fixed: when `before` failed some, the more
 * tests `t`'s own run passes of the same ones, or every failing one when `t` is a solving submit
 * (it passed all the hidden tests). Undefined when it fixed none or nothing can tell.
 */
function fixedBy(before: FeedTurn | undefined, t: FeedTurn): number | undefined {
  const was = before && testsOf(before);
  if (!was || was.passed >= was.total) return undefined;
  if (t.action === 'submit') {
    const solved = t.passed !== undefined && t.expected.length > 0 && t.passed === t.expected.length;
    return solved ? was.total - was.passed : undefined;
  }
  const now = testsOf(t);
  return now && now.total === was.total && now.passed > was.passed ? now.passed - was.passed : undefined;
}

/** A turn's outcome in a few words and its tone: `ok` every test passed, `bad` it did not run. */
export interface TurnOutcome {
  text: string;
  tone: 'ok' | 'bad' | 'plain';
}

/** A turn's outcome for an episode's one-line summary ("pass 3 of 8", "2 of 5 hidden", "error: syntax"). */
export function turnOutcome(t: FeedTurn): TurnOutcome {
  const error = t.report?.error ?? t.error;
  if (error) return { text: `error: ${error}`, tone: 'bad' };
  if (t.action === 'submit') {
    if (t.passed === undefined) return { text: 'submitted', tone: 'plain' };
    const all = t.expected.length > 0 && t.passed === t.expected.length;
    return { text: `${t.passed} of ${t.expected.length} hidden`, tone: all ? 'ok' : 'plain' };
  }
  const tests = testsOf(t);
  if (!tests) return { text: 'ran', tone: 'plain' };
  const tone = tests.passed === tests.total ? 'ok' : 'plain';
  if (t.report) return { text: `pass ${tests.passed} of ${tests.total}`, tone };
  const wrong = tests.total - tests.passed;
  return { text: wrong ? `${wrong} wrong` : 'all right', tone };
}

/** Is `a` a better program for its task than `b`: a higher return, then a shorter program. */
function better(a: FeedEpisode, b: BestProgram): boolean {
  if (a.reward !== b.reward) return a.reward > b.reward;
  return finalProgram(a).length < b.program.length;
}

const finalProgram = (e: FeedEpisode): string => e.turns.at(-1)?.program ?? '';
const newest = (e: FeedEpisode): number => e.versions.at(-1) ?? -1;

/**
 * The feed's state: recent episodes newest first, pinned ones kept where they were as newer ones
 * arrive, and the best-program table. `add` and the pins change it; the readers return copies.
 */
export class ProgramFeed {
  /** Newest first; pinned ones stay past `limit`. */
  private entries: FeedEpisode[] = [];
  private readonly pinned = new Set<string>();
  private readonly best = new Map<string, BestProgram>();
  private arrived = 0;

  constructor(readonly limits: FeedLimits = DEFAULT_FEED_LIMITS) {}

  /** Episodes seen since the feed was made or cleared. */
  get seen(): number {
    return this.arrived;
  }

  /** Adds finished episodes (one group's, in order): the feed keeps the newest, the table learns from all. */
  add(episodes: readonly FeedEpisode[]): void {
    for (const e of episodes) {
      this.entries.unshift(e);
      if (e.replay) continue;
      this.arrived += 1;
      this.learn(e);
    }
    this.trim();
  }

  /** The episodes shown at `level` (greedy replays at any), newest first (pinned ones where they arrived). */
  list(level: LevelFilter = 'all'): FeedEpisode[] {
    return this.entries.filter((e) => level === 'all' || e.level === level || e.replay);
  }

  isPinned(key: string): boolean {
    return this.pinned.has(key);
  }

  /** Pins a shown episode: it stays as newer ones arrive. False when it is not shown or the pins are full. */
  pin(key: string): boolean {
    if (this.pinned.has(key)) return true;
    if (this.pinned.size >= this.limits.maxPinned || !this.entries.some((e) => e.key === key)) return false;
    this.pinned.add(key);
    return true;
  }

  /** Unpins an episode: it goes once `limit` newer ones have arrived. */
  unpin(key: string): void {
    if (this.pinned.delete(key)) this.trim();
  }

  /** Keys of the pinned episodes. */
  pins(): string[] {
    return [...this.pinned];
  }

  /** The best-program table: solved tasks first, then by level and task id. */
  bestPrograms(): BestProgram[] {
    const order = (b: BestProgram) => LEVELS.indexOf(b.level);
    return [...this.best.values()]
      .map((b) => ({ ...b }))
      .sort(
        (a, b) =>
          Number(b.solved) - Number(a.solved) || order(a) - order(b) || a.taskId.localeCompare(b.taskId),
      );
  }

  /** Forgets everything (a new run). */
  clear(): void {
    this.entries = [];
    this.pinned.clear();
    this.best.clear();
    this.arrived = 0;
  }

  /** Keeps the pinned episodes and the `limit` newest others. */
  private trim(): void {
    let unpinned = 0;
    this.entries = this.entries.filter((e) => this.pinned.has(e.key) || ++unpinned <= this.limits.limit);
  }

  /** The best-program table learns from an episode of a task of the suite (relabelled tasks aside). */
  private learn(e: FeedEpisode): void {
    if (isRelabelledTask(e.taskId) || e.turns.length === 0) return;
    const b = this.best.get(e.taskId);
    if (!b && this.best.size >= this.limits.maxTasks) return;
    const solvedAt = e.solved ? newest(e) : null;
    const firstSolved =
      solvedAt === null ? (b?.firstSolved ?? null) : Math.min(solvedAt, b?.firstSolved ?? Infinity);
    const episodes = (b?.episodes ?? 0) + 1;
    if (!b || better(e, b)) {
      const program = finalProgram(e);
      this.best.set(e.taskId, {
        taskId: e.taskId,
        level: e.level,
        program,
        reward: e.reward,
        solved: e.solved,
        version: newest(e),
        firstSolved,
        episodes,
      });
    } else this.best.set(e.taskId, { ...b, firstSolved, episodes });
  }
}

/**
 * What a screen reader hears of the feed: a count of new episodes, at most once per `everyMs`
 * (the episodes themselves are not announced: a run plays several a second).
 */
export class FeedAnnouncer {
  private pending = 0;
  private last = -Infinity;

  constructor(readonly everyMs = 10_000) {}

  /** `n` episodes arrived at `at` ms: the message to announce now, or null (too soon; they are counted). */
  arrived(n: number, at: number): string | null {
    this.pending += n;
    if (this.pending === 0 || at - this.last < this.everyMs) return null;
    const message = `${count(this.pending, 'new episode')} in the program feed`;
    [this.pending, this.last] = [0, at];
    return message;
  }
}

/**
 * The colour of a token written by `version` on a sequential scale over [lo, hi]: older versions
 * paler (greyer, darker on the page's dark panels), the newest a saturated blue. White text reads on all.
 */
export function versionColor(version: number, lo: number, hi: number): string {
  const t = hi > lo ? Math.min(1, Math.max(0, (version - lo) / (hi - lo))) : 1;
  const saturation = Math.round(12 + 78 * t);
  const lightness = Math.round(27 + 7 * t);
  return `hsl(205 ${saturation}% ${lightness}%)`;
}

/** Legend of the version scale: every version in [lo, hi] when few, else about `n` evenly spaced ones. */
export function versionLegend(lo: number, hi: number, n = 6): { version: number; color: string }[] {
  if (hi < lo) return [];
  const span = hi - lo;
  const step = Math.max(1, Math.ceil(span / (n - 1)));
  const versions: number[] = [];
  for (let v = lo; v < hi; v += step) versions.push(v);
  versions.push(hi);
  return versions.map((version) => ({ version, color: versionColor(version, lo, hi) }));
}

/** Lowest and highest version that wrote a token of `episodes` (null: none). */
export function versionRange(episodes: readonly FeedEpisode[]): { lo: number; hi: number } | null {
  const all = episodes.flatMap((e) => e.versions);
  return all.length ? { lo: Math.min(...all), hi: Math.max(...all) } : null;
}

/** How a split is named in the task list and on a replayed episode. */
export const SPLIT_LABELS: Record<EvalSplit, string> = {
  train: 'training',
  heldOut: 'held-out',
  generalisation: 'generalisation',
};

/** The mark of a replayed episode: "played greedily by v12 on sum-3 (held-out task)"; empty for a run's episode. */
export function replayMark(e: Pick<FeedEpisode, 'replay' | 'name'>): string {
  if (!e.replay) return '';
  return `played greedily by v${e.replay.version} on ${e.name} (${SPLIT_LABELS[e.replay.split]} task)`;
}
