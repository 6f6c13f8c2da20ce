/**
 * The time window the live timeline shows (DESIGN §9): zoom, pan and follow, the events'
 * extent, and which events fall in the window.
 */
import type { TimelineEvent } from '../pipeline/events';
import { isInstant } from './timeline-marks';

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
