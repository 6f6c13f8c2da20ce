import type { EventKind, Lane, TimelineEvent } from '../pipeline/events';

/** A timeline event for tests. */
export const ev = (lane: Lane, kind: EventKind, t0: number, t1: number, version = 0): TimelineEvent => ({
  lane,
  kind,
  t0,
  t1,
  version,
});

/** A synchronous leg from `at`: the rollout plays, then the trainer trains, twice (6 s). */
export const syncLeg = (at: number): TimelineEvent[] => [
  ev('controller', 'init', at - 500, at),
  ev('rollout-0', 'generate', at, at + 2000),
  ev('trainer', 'train-step', at + 2000, at + 3000),
  ev('store', 'publish', at + 3000, at + 3000),
  ev('rollout-0', 'generate', at + 3000, at + 5000),
  ev('trainer', 'train-step', at + 5000, at + 6000),
];
