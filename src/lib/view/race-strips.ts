/**
 * The sync-vs-async race drawn as two timeline strips one above the other (DESIGN §9): each
 * leg's trainer and rollout lanes from its own start, on one time scale, and the race in words.
 * A strip is the live timeline's drawing (`timeline-canvas`) with a window that starts at its
 * leg's first event, so the events themselves are never copied.
 */
import type { Lane, TimelineEvent } from '../pipeline/events';
import { isStripLane, type LegStrip } from '../stats/leg-strip';
import { compareLanes, isInstant, LAYOUT_SIZES, type TimelineLayout } from './timeline-view';

/** A strip's lanes: compact rows under the same axis and label column as the live timeline. */
export const STRIP_SIZES = { ...LAYOUT_SIZES, row: 14, rowPad: 2 } as const;

/** What the words say of a leg: its η, rate and trainer's busy share. */
export interface RaceLegFigures {
  eta: number;
  samplesPerSec: number;
  trainerBusy: number;
}

/** A strip drawn: its leg, whether it is done, running or waiting, and what it shows. */
export interface StripView {
  leg: 'sync' | 'async';
  /** Drawn (done, live), not started yet (waiting), or not to be drawn: the race stopped before its end. */
  state: 'done' | 'live' | 'waiting' | 'stopped';
  /** Its leg's name, e.g. "synchronous (η = 0)". */
  name: string;
  /** Epoch ms its axis counts from (null: no event yet). */
  origin: number | null;
  /** Its leg's length so far, ms. */
  duration: number;
  events: readonly TimelineEvent[];
  /** Trainer spans drawn (instants aside): the gaps between them are the trainer's idle time. */
  trainerSpans: number;
}

/** Both strips, their shared lanes and the shared window's width. */
export interface RaceStripsView {
  strips: StripView[];
  layout: TimelineLayout;
  /** Width of the shared window, ms: the longer leg's length (1 s before any event). */
  span: number;
}

/** How the race names a leg. */
export const legName = (eta: number): string =>
  eta === 0 ? 'synchronous (η = 0)' : `asynchronous (η = ${Number.isFinite(eta) ? eta : '∞'})`;

const pct = (x: number): string => `${(x * 100).toFixed(0)}%`;

/**
 * The two strips of a race: `done` holds the finished legs' strips in order (null where a leg
 * kept no event); `live` the running leg's events (null when none runs); `etas` the race's two
 * η; `now` the clock, for the running leg's length; `stopped`: the race ended before its last
 * leg. Live events from before the last finished leg ended are that leg's, not yet replaced:
 * the running leg has then not started.
 */
export function raceStrips(
  done: readonly (LegStrip | null)[],
  live: readonly TimelineEvent[] | null,
  etas: readonly number[],
  now: number,
  stopped = false,
): RaceStripsView {
  const last = done.at(-1);
  const drawn = [0, 1].map((i): Omit<StripView, 'trainerSpans'> => {
    const leg = i === 0 ? 'sync' : 'async';
    const name = legName(etas[i] ?? (i === 0 ? 0 : 4));
    const finished = done[i];
    if (finished) {
      const { origin, end, events } = finished;
      return { leg, state: 'done', name, origin, duration: end - origin, events };
    }
    const waiting = { leg, state: 'waiting', name, origin: null, duration: 0, events: [] } as const;
    if (stopped) return { ...waiting, state: 'stopped' };
    if (i !== done.length || !live) return waiting;
    const events = live.filter((e) => isStripLane(e.lane));
    const origin = events.reduce((t, e) => Math.min(t, e.t0), Infinity);
    if (!Number.isFinite(origin) || (last && origin < last.end)) return { ...waiting, state: 'live' };
    return { leg, state: 'live', name, origin, duration: Math.max(0, now - origin), events };
  });
  const longest = Math.max(...drawn.map((s) => s.duration));
  const span = longest > 0 ? longest : 1000;
  const strips = drawn.map((s) => ({
    ...s,
    trainerSpans: s.events.filter((e) => e.lane === 'trainer' && !isInstant(e)).length,
  }));
  const lanes = new Set<Lane>(['trainer']);
  for (const s of strips) for (const e of s.events) lanes.add(e.lane);
  return { strips, layout: { ...STRIP_SIZES, lanes: [...lanes].sort(compareLanes) }, span };
}

/** A leg in words: "synchronous (η = 0): 12.3 episodes/s, trainer busy 55%". */
export const legWords = (leg: RaceLegFigures): string =>
  `${legName(leg.eta)}: ${leg.samplesPerSec.toFixed(1)} episodes/s, trainer busy ${pct(leg.trainerBusy)}`;

/**
 * The race in words once both legs are done: "asynchronous: 1.62× the synchronous rate — its
 * trainer was busy 92% of the time against 55%", or null before.
 */
export function raceWords(legs: readonly RaceLegFigures[]): string | null {
  const [sync, async] = legs;
  if (!sync || !async) return null;
  const speedup = async.samplesPerSec / Math.max(1e-9, sync.samplesPerSec);
  return `asynchronous: ${speedup.toFixed(2)}× the synchronous rate — its trainer was busy ${pct(async.trainerBusy)} of the time against ${pct(sync.trainerBusy)}`;
}

/** A strip's text alternative: its leg, its lanes, its length and whether it is still running. */
export function stripLabel(s: StripView, lanes: number): string {
  if (s.state === 'waiting') return `Timeline strip of the ${s.name} leg: waits for the leg before it`;
  if (s.state === 'stopped')
    return `Timeline strip of the ${s.name} leg: the race stopped before this leg's end`;
  if (s.origin === null) return `Timeline strip of the ${s.name} leg: starting`;
  const seconds = (s.duration / 1000).toFixed(1);
  const length = s.state === 'live' ? `${seconds} s so far` : `${seconds} s`;
  return `Timeline strip of the ${s.name} leg: ${s.trainerSpans} trainer spans in ${lanes} lanes (the trainer and the rollout workers), ${length}`;
}
