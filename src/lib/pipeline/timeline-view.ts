/**
 * Geometry and logic of the live timeline (DESIGN §9), kept apart from the canvas so that it
 * can be tested in node: lane order, colour per policy version, the visible time window (zoom,
 * pan, follow), which events fall in it, which versions are in flight, and hit testing.
 */
import type { EventKind, Lane, TimelineEvent } from './events';

// ---------------------------------------------------------------------------------------------
// Lanes

/** Sort group of a lane: controller, trainer, store, rollout-0..N, sandbox, anything else. */
function laneGroup(lane: string): number {
  if (lane === 'controller') return 0;
  if (lane === 'trainer') return 1;
  if (lane === 'store') return 2;
  if (lane.startsWith('rollout-')) return 3;
  if (lane === 'sandbox') return 4;
  return 5;
}

/** The worker number of a `rollout-N` lane (Infinity when it is not a number). */
function rolloutIndex(lane: string): number {
  const n = Number(lane.slice('rollout-'.length));
  return Number.isFinite(n) ? n : Infinity;
}

/**
 * Orders lanes for display: controller, trainer, store, rollout-0..N in numeric order
 * (rollout-10 after rollout-2), sandbox. A comparator for `Array.prototype.sort`.
 */
export function compareLanes(a: Lane, b: Lane): number {
  const ga = laneGroup(a);
  const gb = laneGroup(b);
  if (ga !== gb) return ga - gb;
  if (ga === 3) {
    const d = rolloutIndex(a) - rolloutIndex(b);
    if (d !== 0 && !Number.isNaN(d)) return d;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The lanes to draw: those present in `events`, plus always 'trainer' and 'store', in display order. */
export function laneOrder(events: readonly TimelineEvent[]): Lane[] {
  const lanes = new Set<Lane>(['trainer', 'store']);
  for (const e of events) lanes.add(e.lane);
  return [...lanes].sort(compareLanes);
}

// ---------------------------------------------------------------------------------------------
// Colours and marks

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
  'triangle-up' | 'triangle-down' | 'circle' | 'diamond' | 'square' | 'cross' | 'plus' | 'bar' | 'tick';

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
] as const satisfies readonly EventKind[];

/** A kind with a mark of its own. */
export type MarkKind = (typeof MARK_KINDS)[number];

/** The mark of each kind in `MARK_KINDS` (colours from app.css where one fits). */
export const MARKS: Readonly<Record<MarkKind, MarkStyle>> = {
  publish: { shape: 'triangle-up', color: '#4ade80', label: 'publish' },
  adopt: { shape: 'circle', color: '#38bdf8', label: 'adopt' },
  interrupt: { shape: 'bar', color: '#fbbf24', label: 'interrupt' },
  'stale-drop': { shape: 'cross', color: '#f87171', label: 'stale drop' },
  preempt: { shape: 'diamond', color: '#fb923c', label: 'preempt' },
  restart: { shape: 'square', color: '#c084fc', label: 'restart' },
  evict: { shape: 'triangle-down', color: '#cbd5e1', label: 'evict' },
  requeue: { shape: 'plus', color: '#f472b6', label: 'requeue' },
};

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

/** The band of a span of this kind (shared objects; do not mutate). */
export function spanBand(kind: EventKind): SpanBand {
  if (kind === 'episode') return BAND_EPISODE;
  if (kind === 'sandbox') return BAND_SANDBOX;
  if (kind === 'wait') return BAND_WAIT;
  return BAND_WORK;
}

/** Spans of this kind are drawn after the others (on top of the work they are part of). */
export function drawsOnTop(kind: EventKind): boolean {
  return kind === 'sandbox';
}

// ---------------------------------------------------------------------------------------------
// The visible window

/** Options of a `ViewWindow`. */
export interface ViewWindowOptions {
  /** Initial span in ms (default 20 s). */
  span?: number;
  /** Initial right edge, epoch ms (default 0; follow mode moves it on the first frame). */
  end?: number;
  /** Whether the window starts in follow mode (default true). */
  follow?: boolean;
  /** Narrowest span one can zoom to, ms (default 1 ms). */
  minSpan?: number;
  /** Widest span one can zoom to, ms (default 24 h). */
  maxSpan?: number;
}

/**
 * The time window [start, end] (epoch ms) the timeline shows. In follow mode the right edge
 * tracks "now" (`followNow`), keeping the span; zooming in follow mode keeps the right edge
 * pinned; panning or fitting turns follow off.
 */
export class ViewWindow {
  start: number;
  end: number;
  follow: boolean;
  readonly minSpan: number;
  readonly maxSpan: number;

  constructor(opts: ViewWindowOptions = {}) {
    this.minSpan = opts.minSpan ?? 1;
    this.maxSpan = opts.maxSpan ?? 86_400_000;
    const span = this.clampSpan(opts.span ?? 20_000);
    this.end = opts.end ?? 0;
    this.start = this.end - span;
    this.follow = opts.follow ?? true;
  }

  /** Width of the window in ms. */
  get span(): number {
    return this.end - this.start;
  }

  private clampSpan(span: number): number {
    return Math.min(this.maxSpan, Math.max(this.minSpan, span));
  }

  /** In follow mode, moves the window so that its right edge is `now`; otherwise does nothing. */
  followNow(now: number): void {
    if (!this.follow || !Number.isFinite(now)) return;
    const span = this.span;
    this.end = now;
    this.start = now - span;
  }

  /** Turns follow mode on (jumping to `now` when given) or off. */
  setFollow(on: boolean, now?: number): void {
    this.follow = on;
    if (on && now !== undefined) this.followNow(now);
  }

  /**
   * Scales the span by `factor` (< 1 zooms in) keeping `anchorT` at the same x, within the
   * min/max span. In follow mode the anchor is the right edge, so the window stays on now.
   * `widest` bounds zooming out further (the caller's data: zoomed out past it, everything is
   * squeezed into a sliver); a window already wider is not narrowed by zooming out.
   */
  zoom(factor: number, anchorT: number, widest = this.maxSpan): void {
    if (!(factor > 0) || !Number.isFinite(factor)) return;
    const anchor = this.follow || !Number.isFinite(anchorT) ? this.end : anchorT;
    const span = this.span;
    const bound = factor > 1 && Number.isFinite(widest) ? Math.max(span, widest) : Infinity;
    const next = this.clampSpan(Math.min(span * factor, bound));
    const frac = (anchor - this.start) / span;
    this.start = anchor - frac * next;
    this.end = this.start + next;
  }

  /** Moves the window by `dtMs` (positive: later) and turns follow mode off. */
  pan(dtMs: number): void {
    if (!Number.isFinite(dtMs)) return;
    this.follow = false;
    this.start += dtMs;
    this.end += dtMs;
  }

  /** Shows [t0, t1] with a margin of `pad` × its width on each side; turns follow mode off. */
  fit(t0: number, t1: number, pad = 0.02): void {
    if (!Number.isFinite(t0) || !Number.isFinite(t1)) return;
    this.follow = false;
    const lo = Math.min(t0, t1);
    const range = Math.abs(t1 - t0);
    const span = this.clampSpan(range > 0 ? range * (1 + 2 * pad) : 1000);
    const mid = lo + range / 2;
    this.start = mid - span / 2;
    this.end = mid + span / 2;
  }

  /** x of time `t` on a plot `width` px wide (may fall outside [0, width]). */
  xOf(t: number, width: number): number {
    return ((t - this.start) / this.span) * width;
  }

  /** Time at `x` on a plot `width` px wide (the window's start when width ≤ 0). */
  tOf(x: number, width: number): number {
    return width > 0 ? this.start + (x / width) * this.span : this.start;
  }
}

/** Earliest t0 and latest t1 of the events, or null when there are none. */
export function eventExtent(events: readonly TimelineEvent[]): { start: number; end: number } | null {
  let start = Infinity;
  let end = -Infinity;
  for (const e of events) {
    if (e.t0 < start) start = e.t0;
    const t1 = Math.max(e.t0, e.t1);
    if (t1 > end) end = t1;
  }
  return Number.isFinite(start) && Number.isFinite(end) ? { start, end } : null;
}

/**
 * Events to draw in [start, end]: spans that overlap it, instants inside it. Pass `out` to
 * reuse an array (it is cleared first) and avoid an allocation per frame.
 */
export function visibleEvents(
  events: readonly TimelineEvent[],
  start: number,
  end: number,
  out: TimelineEvent[] = [],
): TimelineEvent[] {
  out.length = 0;
  for (const e of events) {
    if (isInstant(e) ? e.t0 >= start && e.t0 <= end : e.t0 < end && e.t1 > start) out.push(e);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Versions in flight

function isRolloutWork(e: TimelineEvent): boolean {
  return (
    (e.kind === 'generate' || e.kind === 'episode') &&
    e.lane.startsWith('rollout-') &&
    e.t1 > e.t0 &&
    e.version >= 0
  );
}

/**
 * Distinct policy versions of the 'generate'/'episode' spans on rollout lanes running at `t`
 * (t0 ≤ t < t1; versions < 0 are not counted). More than one means the pipeline is async.
 */
export function inFlightVersions(events: readonly TimelineEvent[], t: number): Set<number> {
  const versions = new Set<number>();
  for (const e of events) if (isRolloutWork(e) && e.t0 <= t && t < e.t1) versions.add(e.version);
  return versions;
}

/**
 * The most distinct versions in flight at once (see `inFlightVersions`), over the whole log:
 * a sweep over span starts and ends, O(n log n).
 */
export function maxVersionsInFlight(events: readonly TimelineEvent[]): number {
  const points: { t: number; delta: 1 | -1; version: number }[] = [];
  for (const e of events) {
    if (!isRolloutWork(e)) continue;
    points.push({ t: e.t0, delta: 1, version: e.version }, { t: e.t1, delta: -1, version: e.version });
  }
  // Ends before starts at the same time: spans are half-open, back to back is not overlap.
  points.sort((a, b) => a.t - b.t || a.delta - b.delta);
  const running = new Map<number, number>();
  let best = 0;
  for (const p of points) {
    const count = (running.get(p.version) ?? 0) + p.delta;
    if (count > 0) running.set(p.version, count);
    else running.delete(p.version);
    if (p.delta > 0 && running.size > best) best = running.size;
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// Layout, axis and hit testing

/** Where things are on the canvas, in CSS px. */
export interface TimelineLayout {
  /** Lanes, top to bottom. */
  lanes: readonly Lane[];
  /** Width of the label column at the left; the plot starts at x = gutter. */
  gutter: number;
  /** Height of the time axis at the top; lane 0 starts at y = axis. */
  axis: number;
  /** Height of one lane. */
  row: number;
  /** Empty space above and below the spans inside a lane. */
  rowPad: number;
}

/** Default sizes of a `TimelineLayout` (CSS px). */
export const LAYOUT_SIZES = { gutter: 84, axis: 18, row: 22, rowPad: 3 } as const;

/** Total height of the canvas for this layout. */
export function layoutHeight(layout: TimelineLayout): number {
  return layout.axis + layout.lanes.length * layout.row + 2;
}

/** Index of the lane at y, or −1. */
export function laneAt(y: number, layout: TimelineLayout): number {
  const i = Math.floor((y - layout.axis) / layout.row);
  return i >= 0 && i < layout.lanes.length ? i : -1;
}

/** Top y of a span of this kind in lane `index`, and its height. */
export function bandY(kind: EventKind, index: number, layout: TimelineLayout): { y: number; h: number } {
  const band = spanBand(kind);
  const inner = layout.row - 2 * layout.rowPad;
  return { y: layout.axis + index * layout.row + layout.rowPad + band.top * inner, h: band.height * inner };
}

/** Half-size of a mark in CSS px. */
export const MARK_RADIUS = 4.5;

/** Spans narrower than this many CSS px are not drawn (nor hit). */
export const MIN_SPAN_PX = 0.5;

/**
 * The event under (x, y) on a canvas `width` CSS px wide, or undefined: marks first (they are
 * drawn on top), then the narrowest span under the point, within `tolerance` px. Spans too
 * narrow to be drawn (`MIN_SPAN_PX`) are not hit.
 */
export function hitTest(
  events: readonly TimelineEvent[],
  view: ViewWindow,
  layout: TimelineLayout,
  width: number,
  x: number,
  y: number,
  tolerance = 2,
): TimelineEvent | undefined {
  const plotW = width - layout.gutter;
  const px = x - layout.gutter;
  const lane = layout.lanes[laneAt(y, layout)];
  if (plotW <= 0 || px < 0 || px > plotW || lane === undefined) return undefined;
  const index = layout.lanes.indexOf(lane);
  let mark: TimelineEvent | undefined;
  let markDist = Infinity;
  let span: TimelineEvent | undefined;
  let spanWidth = Infinity;
  for (const e of events) {
    if (e.lane !== lane) continue;
    if (markOf(e)) {
      const d = Math.abs(view.xOf(markTime(e), plotW) - px);
      if (d <= MARK_RADIUS + tolerance && d < markDist) {
        mark = e;
        markDist = d;
      }
    }
    if (isInstant(e)) continue;
    const x0 = view.xOf(e.t0, plotW);
    const x1 = view.xOf(e.t1, plotW);
    if (x1 - x0 < MIN_SPAN_PX) continue;
    const { y: by, h } = bandY(e.kind, index, layout);
    if (y < by - tolerance || y > by + h + tolerance) continue;
    if (px < x0 - tolerance || px > x1 + tolerance) continue;
    if (x1 - x0 < spanWidth) {
      span = e;
      spanWidth = x1 - x0;
    }
  }
  return mark ?? span;
}

/** A 1-2-5 step (ms) giving at most `maxTicks` ticks over `span` ms. */
export function tickStep(span: number, maxTicks: number): number {
  const raw = span / Math.max(1, maxTicks);
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const pow = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * pow >= raw) return m * pow;
  return 10 * pow;
}

/** A tick label: `ms` (relative to some origin) in seconds, with as many decimals as `step` needs. */
export function formatTick(ms: number, step: number): string {
  const decimals = Math.min(6, Math.max(0, -Math.floor(Math.log10(step / 1000) + 1e-9)));
  return `${(ms / 1000).toFixed(decimals)} s`;
}

/** A duration for people: µs, ms or s. */
export function formatDuration(ms: number): string {
  if (ms < 1) return `${(ms * 1000).toFixed(0)} µs`;
  if (ms < 1000) return `${ms.toFixed(ms < 10 ? 2 : 1)} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 3 : 2)} s`;
}
