/**
 * Reward-based slot scheduling (DESIGN §6, seed 000): waiting work ordered by priority class,
 * then by expected learning value; preemption of the lowest-value running work when a
 * higher-class item has waited past a bound.
 */

/** Priority classes, highest first: work lost to a fault, the curriculum level, review of easier levels. */
export type JobClass = 'high' | 'normal' | 'low';

export const CLASS_RANK: Record<JobClass, number> = { high: 2, normal: 1, low: 0 };

/** What the scheduler needs to know of a job. */
export interface Schedulable {
  id: number;
  cls: JobClass;
  /** Expected learning value (higher first within a class). */
  value: number;
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

/** The waiting queue. */
export class WaitingQueue<J extends Schedulable> {
  private items: J[] = [];

  get size(): number {
    return this.items.length;
  }

  push(job: J): void {
    this.items.push(job);
    this.items.sort(compareJobs);
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
