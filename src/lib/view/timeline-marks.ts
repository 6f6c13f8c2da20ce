/**
 * How the live timeline draws an event (DESIGN §9): a colour per policy version, the marks of
 * instants (shape, colour, legend text, SVG path) and the band a span fills in its lane.
 */
import type { EventKind, TimelineEvent } from '../pipeline/events';

/** The golden angle in degrees: consecutive versions land far apart on the hue circle. */
const GOLDEN_ANGLE = 137.50776405003785;
/** Colour of work done without a policy version (version < 0). */
export const NO_VERSION_COLOR = 'hsl(215, 10%, 55%)';
const colorCache = new Map<number, string>();

/**
 * A distinct colour per policy version (hue stepped by the golden angle), grey for version < 0.
 * Memoised: the canvas asks for it once per span per frame.
 */
export function versionColor(version: number): string {
  if (!(version >= 0)) return NO_VERSION_COLOR;
  const cached = colorCache.get(version);
  if (cached !== undefined) return cached;
  const hue = (200 + Math.floor(version) * GOLDEN_ANGLE) % 360;
  const color = `hsl(${hue.toFixed(1)}, 70%, 60%)`;
  if (colorCache.size < 4096) colorCache.set(version, color);
  return color;
}

/** How an instant is drawn. */
export type MarkShape =
  | 'triangle-up'
  | 'triangle-down'
  | 'circle'
  | 'diamond'
  | 'square'
  | 'cross'
  | 'plus'
  | 'star'
  | 'bar'
  | 'tick';

/** Shape, colour and legend text of a mark. */
export interface MarkStyle {
  shape: MarkShape;
  color: string;
  label: string;
}

/** Kinds drawn as a mark of their own (at t1, also when the event is a span). */
export const MARK_KINDS = [
  'publish',
  'adopt',
  'interrupt',
  'stale-drop',
  'preempt',
  'restart',
  'evict',
  'requeue',
  'strategy',
  'overrun',
] as const satisfies readonly EventKind[];

/** A kind with a mark of its own. */
export type MarkKind = (typeof MARK_KINDS)[number];

/** The mark of each kind in `MARK_KINDS` (colours from app.css where one fits). */
/**
 * The timeline marks a custom environment's training can produce (its legend lists only these):
 * it has no slot preemption, no retries, no stored versions to evict.
 */
export const CUSTOM_MARKS: readonly MarkKind[] = ['publish', 'adopt', 'interrupt', 'stale-drop'];

export const MARKS: Readonly<Record<MarkKind, MarkStyle>> = {
  publish: { shape: 'triangle-up', color: '#4ade80', label: 'publish' },
  adopt: { shape: 'circle', color: '#38bdf8', label: 'adopt' },
  interrupt: { shape: 'bar', color: '#fbbf24', label: 'interrupt' },
  'stale-drop': { shape: 'cross', color: '#f87171', label: 'stale drop' },
  preempt: { shape: 'diamond', color: '#fb923c', label: 'preempt' },
  restart: { shape: 'square', color: '#c084fc', label: 'restart' },
  evict: { shape: 'triangle-down', color: '#cbd5e1', label: 'evict' },
  requeue: { shape: 'plus', color: '#f472b6', label: 'requeue' },
  strategy: { shape: 'star', color: '#a3e635', label: 'strategy switch (auto)' },
  overrun: { shape: 'tick', color: '#f97316', label: 'over budget' },
};

/** Kinds whose legend line shows only once the timeline holds such an event (rare ones). */
export const RARE_MARKS: readonly MarkKind[] = ['strategy', 'overrun'];

/** The marks of `marks` the legend lists: the rare ones only when `events` hold one. */
export function legendMarks(marks: readonly MarkKind[], events: readonly TimelineEvent[]): MarkKind[] {
  const present = new Set(events.filter((e) => RARE_MARKS.includes(e.kind as MarkKind)).map((e) => e.kind));
  return marks.filter((k) => !RARE_MARKS.includes(k) || present.has(k));
}

/**
 * The headline of a `strategy` event (`auto`'s switch) for its tooltip: "full → selective".
 * Null for other events or one without both names.
 */
export function strategySwitchLine(e: TimelineEvent): string | null {
  if (e.kind !== 'strategy') return null;
  const { from, to } = e.meta ?? {};
  return from !== undefined && to !== undefined ? `${String(from)} → ${String(to)}` : null;
}

const ERROR_TICK: MarkStyle = { shape: 'tick', color: '#f87171', label: 'error' };
const OTHER_TICK: MarkStyle = { shape: 'tick', color: '#94a3b8', label: 'other instant' };

function isMarkKind(kind: EventKind): kind is MarkKind {
  return Object.hasOwn(MARKS, kind);
}

/** True when the event is an instant (t1 ≤ t0) rather than a span. */
export function isInstant(e: TimelineEvent): boolean {
  return !(e.t1 > e.t0);
}

/**
 * Where and how the event gets a mark: kinds in `MARK_KINDS` at t1 (the moment the publish,
 * adopt, … took effect, also for spans); other instants as a thin tick; other spans none.
 */
export function markOf(e: TimelineEvent): MarkStyle | undefined {
  if (isMarkKind(e.kind)) return MARKS[e.kind];
  if (!isInstant(e)) return undefined;
  return e.kind === 'error' ? ERROR_TICK : OTHER_TICK;
}

/**
 * The mark of a sandbox call inside an episode group's span (`TimelineEvent.calls`: each `<run>`
 * and `<submit>`): a short tick across the episode bar, at the time the call started.
 */
export const SANDBOX_CALL: MarkStyle = { shape: 'tick', color: '#e879f9', label: 'sandbox call' };

/** The band a sandbox-call tick covers in its lane (fractions of the inner height): the episode bar and a little below. */
export const CALL_BAND = { top: 0, height: 0.45 } as const;

/** Epoch ms of each sandbox call an event's span holds (none for most events). */
export function callTimes(e: TimelineEvent): number[] {
  return (e.calls ?? []).map((dt) => e.t0 + dt);
}

/**
 * Sandbox call `i` of an episode group's span as an instant, for the tooltip: the group's
 * lane, version, job and task, and which call of how many it is.
 */
export function callEvent(e: TimelineEvent, i: number): TimelineEvent {
  const t = e.t0 + (e.calls?.[i] ?? 0);
  const meta: Record<string, string | number | boolean> = {
    'sandbox call': `${i + 1} of ${e.calls?.length ?? 0} in the group (<run> or <submit>)`,
  };
  for (const key of ['task', 'job'] as const) if (e.meta?.[key] !== undefined) meta[key] = e.meta[key];
  return { lane: e.lane, kind: 'sandbox', t0: t, t1: t, version: e.version, meta };
}

/** Points of a plus sign with arms `r` long and `a` thick, rotated by `angle` radians. */
function plusPoints(r: number, a: number, angle: number): [number, number][] {
  const pts: [number, number][] = [
    [-a, -r],
    [a, -r],
    [a, -a],
    [r, -a],
    [r, a],
    [a, a],
    [a, r],
    [-a, r],
    [-a, a],
    [-r, a],
    [-r, -a],
    [-a, -a],
  ];
  const c = Math.cos(angle);
  const s = Math.sin(angle);
  return pts.map(([x, y]) => [x * c - y * s, x * s + y * c]);
}

const fmt = (v: number) => String(Math.round(v * 100) / 100);

function polygon(pts: readonly (readonly [number, number])[]): string {
  return `M${pts.map(([x, y]) => `${fmt(x)},${fmt(y)}`).join('L')}Z`;
}

/**
 * SVG path data of a mark centred on (0, 0): `r` is its half-size, `h` the half-height of the
 * full-lane shapes ('bar', 'tick'). Every shape is a closed outline to fill (and stroke), so
 * the canvas (`new Path2D(d)`) and the legend (`<path d>`) draw the same thing.
 */
export function markPath(shape: MarkShape, r: number, h = r): string {
  switch (shape) {
    case 'triangle-up':
      return polygon([
        [0, -r],
        [r, r * 0.8],
        [-r, r * 0.8],
      ]);
    case 'triangle-down':
      return polygon([
        [0, r],
        [r, -r * 0.8],
        [-r, -r * 0.8],
      ]);
    case 'circle':
      return `M${fmt(r)},0A${fmt(r)},${fmt(r)} 0 1 0 ${fmt(-r)},0A${fmt(r)},${fmt(r)} 0 1 0 ${fmt(r)},0Z`;
    case 'diamond':
      return polygon([
        [0, -r * 1.15],
        [r, 0],
        [0, r * 1.15],
        [-r, 0],
      ]);
    case 'square': {
      const q = r * 0.8;
      return polygon([
        [-q, -q],
        [q, -q],
        [q, q],
        [-q, q],
      ]);
    }
    case 'cross':
      return polygon(plusPoints(r * 1.1, r * 0.3, Math.PI / 4));
    case 'plus':
      return polygon(plusPoints(r, r * 0.3, 0));
    case 'star':
      return polygon(
        Array.from({ length: 10 }, (_, i): [number, number] => {
          const rad = i % 2 === 0 ? r * 1.2 : r * 0.5;
          const a = -Math.PI / 2 + (i * Math.PI) / 5;
          return [rad * Math.cos(a), rad * Math.sin(a)];
        }),
      );
    case 'bar':
      return polygon([
        [-1.5, -h],
        [1.5, -h],
        [1.5, h],
        [-1.5, h],
      ]);
    case 'tick':
      return polygon([
        [-0.75, -h],
        [0.75, -h],
        [0.75, h],
        [-0.75, h],
      ]);
  }
}

/** Time of an event's mark (see `markOf`). */
export function markTime(e: TimelineEvent): number {
  return isInstant(e) ? e.t0 : e.t1;
}

/**
 * Vertical band of a span inside its lane, as fractions of the lane's inner height, and its
 * opacity: an episode is a thin bar on top, the work it contains (generate, …) fills the rest,
 * a sandbox run sits on the lower half of it, a wait is a faint strip.
 */
export interface SpanBand {
  top: number;
  height: number;
  alpha: number;
}

const BAND_EPISODE: SpanBand = { top: 0, height: 0.2, alpha: 1 };
const BAND_SANDBOX: SpanBand = { top: 0.6, height: 0.4, alpha: 1 };
const BAND_WAIT: SpanBand = { top: 0.45, height: 0.25, alpha: 0.35 };
const BAND_WORK: SpanBand = { top: 0.28, height: 0.72, alpha: 1 };
const BAND_BLOCKED: SpanBand = { top: 0.28, height: 0.72, alpha: 0.9 };

/** The band of a span of this kind (shared objects; do not mutate). */
export function spanBand(kind: EventKind): SpanBand {
  if (kind === 'episode') return BAND_EPISODE;
  if (kind === 'sandbox') return BAND_SANDBOX;
  if (kind === 'wait') return BAND_WAIT;
  if (kind === 'blocked') return BAND_BLOCKED;
  return BAND_WORK;
}

/**
 * A rollout slot held by the staleness bound (`blocked`): a grey hatched bar under the work of
 * the lane's other slots, so it shows where the worker has nothing to play.
 */
export const BLOCKED_SLOT = {
  color: '#94a3b8',
  label: 'slot blocked by η (hatched bar)',
} as const;

/** Spans of this kind are drawn before the others (under the work of the same lane). */
export function drawsUnder(kind: EventKind): boolean {
  return kind === 'blocked';
}

/** Spans of this kind are drawn after the others (on top of the work they are part of). */
export function drawsOnTop(kind: EventKind): boolean {
  return kind === 'sandbox';
}
