/**
 * A finished leg of the sync-vs-async race as the comparison keeps it (DESIGN §9): its trainer and
 * rollout lanes' events and its span. The run layer keeps one per leg; `view/race-strips` draws it.
 */
import type { Lane, TimelineEvent } from '../pipeline/events';

/** Events a finished leg keeps for its strip, at most (its newest). */
export const STRIP_EVENTS_KEPT = 10_000;

/** A finished leg's timeline, as the race keeps it. */
export interface LegStrip {
  /** Epoch ms of the leg's first trainer or rollout event: its strip's 0 s. */
  origin: number;
  /** Epoch ms of its last event's end. */
  end: number;
  /** Its trainer and rollout lanes' events (the newest `STRIP_EVENTS_KEPT`). */
  events: readonly TimelineEvent[];
}

/** A lane a strip draws: the trainer and the rollout workers. */
export const isStripLane = (lane: Lane): boolean => lane === 'trainer' || lane.startsWith('rollout-');

/** A finished leg's strip from its run's timeline events, or null when it has none on those lanes. */
export function legStrip(events: readonly TimelineEvent[]): LegStrip | null {
  const kept = events.filter((e) => isStripLane(e.lane)).slice(-STRIP_EVENTS_KEPT);
  const first = kept[0];
  if (!first) return null;
  let [origin, end] = [first.t0, first.t1];
  for (const e of kept) [origin, end] = [Math.min(origin, e.t0), Math.max(end, e.t1)];
  return { origin, end, events: kept };
}
