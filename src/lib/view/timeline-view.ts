/**
 * Geometry and logic of the live timeline (DESIGN §9), kept apart from the canvas so that it
 * can be tested in node: lane order, which versions are in flight, the layout, hit testing and
 * the time axis. Marks and colours live in `timeline-marks`, the visible window in
 * `timeline-window`; both are re-exported here.
 */
import type { EventKind, Lane, TimelineEvent } from '../pipeline/events';
import { CALL_BAND, callEvent, isInstant, markOf, markTime, spanBand } from './timeline-marks';
import type { ViewWindow } from './timeline-window';

export * from './timeline-marks';
export * from './timeline-window';

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

/** Top y of the sandbox-call ticks in lane `index`, and their height (`CALL_BAND`). */
export function callBandY(index: number, layout: TimelineLayout): { y: number; h: number } {
  const inner = layout.row - 2 * layout.rowPad;
  return {
    y: layout.axis + index * layout.row + layout.rowPad + CALL_BAND.top * inner,
    h: CALL_BAND.height * inner,
  };
}

/** Half-size of a mark in CSS px. */
export const MARK_RADIUS = 4.5;

/** Spans narrower than this many CSS px are not drawn (nor hit). */
export const MIN_SPAN_PX = 0.5;

/**
 * The event under (x, y) on a canvas `width` CSS px wide, or undefined: marks first (they are
 * drawn on top), then a sandbox call's tick (as its instant, `callEvent`), then the narrowest
 * span under the point, within `tolerance` px. Spans too narrow to be drawn (`MIN_SPAN_PX`) are
 * not hit.
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
  let call: TimelineEvent | undefined;
  let callDist = Infinity;
  const callBand = callBandY(index, layout);
  const onCalls = y >= callBand.y - tolerance && y <= callBand.y + callBand.h + tolerance;
  for (const e of events) {
    if (e.lane !== lane) continue;
    const calls = onCalls ? (e.calls ?? []) : [];
    for (let i = 0; i < calls.length; i++) {
      const d = Math.abs(view.xOf(e.t0 + (calls[i] ?? 0), plotW) - px);
      if (d <= tolerance + 1 && d < callDist) [call, callDist] = [callEvent(e, i), d];
    }
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
  return mark ?? call ?? span;
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
