/** Swim lane of the timeline an event belongs to (DESIGN §9). */
export type Lane = 'trainer' | 'store' | `rollout-${number}` | 'controller' | 'sandbox';

/** What happened in a span or at an instant (t0 === t1). */
export type EventKind =
  | 'init'
  | 'generate'
  | 'sandbox'
  | 'episode'
  | 'train-step'
  | 'publish'
  | 'adopt'
  | 'interrupt'
  | 'stale-drop'
  | 'preempt'
  | 'wait'
  /** A rollout slot free but held by the staleness bound η (a span on its worker's lane). */
  | 'blocked'
  | 'load'
  | 'error'
  /** The update strategy switched (`auto`), with its reason. */
  | 'strategy'
  /** Stored data deleted to make room (a full storage quota, or retention). */
  | 'evict'
  /** A crashed or hung worker was replaced, or the trainer restarted from the store. */
  | 'restart'
  /** Work lost to a fault, put back in the queue. */
  | 'requeue'
  /** A group's episodes used more than a slot's budget (sandbox ms or tokens per episode). */
  | 'overrun';

/** One timeline event. Times are epoch milliseconds, comparable across threads. */
export interface TimelineEvent {
  lane: Lane;
  kind: EventKind;
  t0: number;
  t1: number;
  /** Policy version the work ran with, or −1 when none applies. */
  version: number;
  meta?: Record<string, string | number | boolean>;
  /**
   * Sandbox calls inside the span, ms after t0 (whole ms, ascending): each `<run>` and `<submit>`
   * of an episode group's episodes. On the group's own event, so that a call adds no event.
   */
  calls?: number[];
}

/** Epoch milliseconds with sub-millisecond precision; the same clock in every worker. */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

/** Bounded in-memory event log: keeps the newest `capacity` events. */
export class EventLog {
  private items: TimelineEvent[] = [];
  /** Events pushed since the log was made, the dropped ones included (a writer's high-water mark). */
  pushed = 0;

  constructor(readonly capacity = 10_000) {}

  push(...events: TimelineEvent[]): void {
    this.pushed += events.length;
    this.items.push(...events);
    if (this.items.length > this.capacity) this.items.splice(0, this.items.length - this.capacity);
  }

  get events(): readonly TimelineEvent[] {
    return this.items;
  }
}
