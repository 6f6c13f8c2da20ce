export type { EventKind, Lane, TimelineEvent } from '../storage/records';
import type { TimelineEvent } from '../storage/records';

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
