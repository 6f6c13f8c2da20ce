/**
 * Reward-based slot scheduling (DESIGN §6, seed 000): waiting work ordered by priority class,
 * then by expected learning value (or as `pipeline.schedule` says: arrival order, or expected
 * reward); preemption of the lowest-value running work when a higher-class item has waited past
 * a bound, or under `expected-reward` of the lowest-reward running work when a waiting job's
 * expected reward exceeds it by a margin.
 */

import type { ScheduleKind } from '../config/run-config';
import type { JobCost } from './types';

/** Priority classes, highest first: work lost to a fault, the curriculum level, review of easier levels. */
export type JobClass = 'high' | 'normal' | 'low';

export const CLASS_RANK: Record<JobClass, number> = { high: 2, normal: 1, low: 0 };

/** What the scheduler needs to know of a job. */
export interface Schedulable {
  id: number;
  cls: JobClass;
  /** Expected learning value (higher first within a class). */
  value: number;
  /** Expected return of the job's task (`expected-reward` orders by it); absent counts as 0. */
  expectedReward?: number;
  /** When it entered the waiting queue (ms, any monotonic clock). */
  enqueuedAt: number;
}

/**
 * Expected learning value of a task from its record: p(1 − p) with p the success rate smoothed
 * by a uniform prior, (s + 1)/(n + 2). Largest (0.25) near p = 0.5, where a group of samples
 * disagrees most and its advantages carry the most signal; an untried task counts as p = 0.5.
 */
export function learningValue(successes: number, attempts: number): number {
  const p = (successes + 1) / (attempts + 2);
  return p * (1 - p);
}

/** Orders a before b when it should start first: class, then value, then waiting longest. */
export function compareJobs(a: Schedulable, b: Schedulable): number {
  return (
    CLASS_RANK[b.cls] - CLASS_RANK[a.cls] || b.value - a.value || a.enqueuedAt - b.enqueuedAt || a.id - b.id
  );
}

/** Orders a before b in arrival order (`fifo`): class and value aside. */
export function compareArrival(a: Schedulable, b: Schedulable): number {
  return a.enqueuedAt - b.enqueuedAt || a.id - b.id;
}

/** Orders a before b by class, then expected reward, then waiting longest (`expected-reward`). */
export function compareExpectedReward(a: Schedulable, b: Schedulable): number {
  return (
    CLASS_RANK[b.cls] - CLASS_RANK[a.cls] ||
    (b.expectedReward ?? 0) - (a.expectedReward ?? 0) ||
    compareArrival(a, b)
  );
}

/**
 * The waiting queue's order under `kind`: `learning-value` by class, then p(1 − p) of the task's
 * success rate; `fifo` in arrival order, class and value aside; `expected-reward` by class, then
 * the task's expected return (`ExpectedRewards`).
 */
export function jobOrder(kind: ScheduleKind): (a: Schedulable, b: Schedulable) => number {
  return kind === 'fifo' ? compareArrival : kind === 'expected-reward' ? compareExpectedReward : compareJobs;
}

/**
 * Expected return per task: a running mean of its episodes' returns, each earlier one weighing
 * 1 − 1/window as much as the next (recent returns count most). A task never played expects
 * `prior`, optimistic so that it gets tried.
 */
export class ExpectedRewards {
  private readonly sums = new Map<string, [number, number]>();

  constructor(
    readonly prior: number,
    readonly window = 16,
  ) {
    if (!(window >= 1)) throw new Error(`the expected reward's window must be ≥ 1, got ${window}`);
  }

  record(taskId: string, ret: number): void {
    const keep = 1 - 1 / this.window;
    const [n, s] = this.sums.get(taskId) ?? [0, 0];
    this.sums.set(taskId, [n * keep + 1, s * keep + ret]);
  }

  of(taskId: string): number {
    const e = this.sums.get(taskId);
    return e ? e[1] / e[0] : this.prior;
  }
}

/** The waiting queue, in `order` (class, then learning value, by default). */
export class WaitingQueue<J extends Schedulable> {
  private items: J[] = [];

  constructor(private readonly order: (a: Schedulable, b: Schedulable) => number = compareJobs) {}

  get size(): number {
    return this.items.length;
  }

  push(job: J): void {
    this.items.push(job);
    this.items.sort(this.order);
  }

  /** How many waiting jobs `pred` holds for. */
  count(pred: (job: J) => boolean): number {
    return this.items.filter(pred).length;
  }

  some(pred: (job: J) => boolean): boolean {
    return this.items.some(pred);
  }

  /** The job to start next, without removing it. */
  peek(): J | undefined {
    return this.items[0];
  }

  shift(): J | undefined {
    return this.items.shift();
  }

  clear(): J[] {
    const out = this.items;
    this.items = [];
    return out;
  }
}

/**
 * The running job to preempt for `waiting`, or null: only when `waiting` has waited at least
 * `boundMs` and outranks the running job by class; among those, the lowest class, then the
 * lowest value, then the most recently started (it has the least work to lose).
 */
export function preemptionVictim<R extends Omit<Schedulable, 'enqueuedAt'> & { startedAt: number }>(
  waiting: Schedulable | undefined,
  running: readonly R[],
  now: number,
  boundMs: number,
): R | null {
  if (!waiting || now - waiting.enqueuedAt < boundMs) return null;
  const rank = CLASS_RANK[waiting.cls];
  const candidates = running.filter((r) => CLASS_RANK[r.cls] < rank);
  if (candidates.length === 0) return null;
  candidates.sort(
    (a, b) => CLASS_RANK[a.cls] - CLASS_RANK[b.cls] || a.value - b.value || b.startedAt - a.startedAt,
  );
  return candidates[0] ?? null;
}

/**
 * The running job to preempt for `waiting` under `expected-reward`, or null: only when `waiting`
 * has waited at least `boundMs` and its expected return exceeds the running job's by `margin`;
 * among those, the lowest expected return, then the most recently started.
 */
export function rewardVictim<R extends Omit<Schedulable, 'enqueuedAt'> & { startedAt: number }>(
  waiting: Schedulable | undefined,
  running: readonly R[],
  now: number,
  boundMs: number,
  margin: number,
): R | null {
  if (!waiting || now - waiting.enqueuedAt < boundMs || !Number.isFinite(margin)) return null;
  const want = waiting.expectedReward ?? 0;
  const candidates = running.filter((r) => want - (r.expectedReward ?? 0) >= margin);
  candidates.sort((a, b) => (a.expectedReward ?? 0) - (b.expectedReward ?? 0) || b.startedAt - a.startedAt);
  return candidates[0] ?? null;
}

/**
 * Expected cost of a task's episode (sandbox ms and policy tokens): a running mean over its
 * recent groups, like `ExpectedRewards`. A task never played is expected to cost nothing (it is
 * admitted, and measured).
 */
export class CostEstimates {
  private readonly sums = new Map<string, [number, number, number]>();

  constructor(readonly window = 16) {}

  /** One group's cost per episode. */
  record(taskId: string, perEpisode: JobCost): void {
    const keep = 1 - 1 / this.window;
    const [n, ms, tokens] = this.sums.get(taskId) ?? [0, 0, 0];
    this.sums.set(taskId, [
      n * keep + 1,
      ms * keep + perEpisode.sandboxMs,
      tokens * keep + perEpisode.tokens,
    ]);
  }

  of(taskId: string): JobCost {
    const e = this.sums.get(taskId);
    return e ? { sandboxMs: e[1] / e[0], tokens: e[2] / e[0] } : { sandboxMs: 0, tokens: 0 };
  }
}

/**
 * Whether a job of expected cost `job` (per episode) fits beside `running` (the expected costs
 * of the jobs a worker runs) within `slots` × `budget`; a budget field of 0 has no limit.
 */
export function fitsBudget(
  job: JobCost,
  running: readonly JobCost[],
  slots: number,
  budget: JobCost,
): boolean {
  const fits = (k: keyof JobCost) =>
    budget[k] <= 0 || running.reduce((n, c) => n + c[k], job[k]) <= slots * budget[k] + 1e-9;
  return fits('sandboxMs') && fits('tokens');
}

/** Whether a group's measured cost per episode went over `budget` (a field of 0 has no limit). */
export function overBudget(perEpisode: JobCost, budget: JobCost): boolean {
  return (
    (budget.sandboxMs > 0 && perEpisode.sandboxMs > budget.sandboxMs) ||
    (budget.tokens > 0 && perEpisode.tokens > budget.tokens)
  );
}
