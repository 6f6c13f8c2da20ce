/**
 * Paints the live timeline (DESIGN §9) on a 2D canvas: lane stripes and labels, the time axis,
 * spans coloured by policy version, the sandbox calls inside episode spans, the marks of
 * instants, then the doctor's findings. Browser-only (Path2D); the
 * geometry it uses is tested in `pipeline/timeline-*`.
 */
import type { Lane, TimelineEvent } from '../pipeline/events';
import {
  CALL_BAND,
  MARK_RADIUS,
  SANDBOX_CALL,
  MIN_SPAN_PX,
  BLOCKED_SLOT,
  drawsOnTop,
  drawsUnder,
  formatTick,
  isInstant,
  markOf,
  markPath,
  markTime,
  spanBand,
  tickStep,
  versionColor,
  visibleEvents,
  type MarkShape,
  type TimelineLayout,
  type ViewWindow,
} from './timeline-view';

/** Colours the canvas draws with (app.css's, once read from the document). */
export interface TimelineTheme {
  text: string;
  muted: string;
  border: string;
  bg: string;
}

/** What one frame draws. */
export interface TimelineFrame {
  events: readonly TimelineEvent[];
  view: ViewWindow;
  layout: TimelineLayout;
  laneIndex: ReadonlyMap<Lane, number>;
  /** The right edge in follow mode (epoch ms). */
  followTime: number;
  /** Epoch ms of the first event: the axis counts seconds from it (the window's start when none). */
  firstEvent: number | undefined;
  /** Canvas size in CSS px, and device pixels per CSS px. */
  cssWidth: number;
  height: number;
  dpr: number;
  /** The doctor's findings: a line through every lane at the time each fired (epoch ms). */
  findings?: readonly { t: number; color: string }[];
}

/** What a frame drew: distinct policy versions among the spans in the window, sandbox-call ticks, preemption marks. */
export interface FrameCounts {
  versions: number;
  calls: number;
  preempts: number;
}

const STRIPE = 'rgba(255, 255, 255, 0.025)';

/** The pass a span is drawn in: 0 under the work (blocked slots), 1 the work, 2 on top of it. */
const passOf = (kind: TimelineEvent['kind']): number => (drawsUnder(kind) ? 0 : drawsOnTop(kind) ? 2 : 1);
const FONT = '11px ui-monospace, SFMono-Regular, Menlo, monospace';

/** Draws frames of the timeline, reusing its buffers so that a frame allocates (almost) nothing. */
export class TimelinePainter {
  readonly theme: TimelineTheme = { text: '#e2e8f0', muted: '#94a3b8', border: '#23314f', bg: '#0f172a' };
  private readonly visible: TimelineEvent[] = [];
  /** Versions of the spans drawn this frame (few: a linear scan beats hashing). */
  private readonly seenVersions: number[] = [];
  private readonly markPaths: Partial<Record<MarkShape, Path2D>> = {};
  private callPath: { row: number; path: Path2D } | null = null;
  private hatch: CanvasPattern | null | undefined;

  /**
   * Draws one frame; returns the distinct policy versions among the spans in the window (drawn,
   * or too narrow to draw) and the sandbox-call ticks drawn, or null when the canvas has no room
   * for a plot.
   */
  paint(canvas: HTMLCanvasElement, ctx: CanvasRenderingContext2D, f: TimelineFrame): FrameCounts | null {
    const { view, layout, cssWidth, dpr } = f;
    const { lanes, gutter, axis, row, rowPad } = layout;
    const h = f.height;
    const theme = this.theme;
    const bw = Math.max(1, Math.round(cssWidth * dpr));
    const bh = Math.max(1, Math.round(h * dpr));
    if (canvas.width !== bw) canvas.width = bw;
    if (canvas.height !== bh) canvas.height = bh;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, cssWidth, h);
    view.followNow(f.followTime);
    const plotW = cssWidth - gutter;
    if (plotW <= 0) return null;

    // Lane stripes and labels.
    ctx.font = FONT;
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'left';
    for (let i = 0; i < lanes.length; i++) {
      const y = axis + i * row;
      if (i % 2 === 0) {
        ctx.fillStyle = STRIPE;
        ctx.fillRect(0, y, cssWidth, row);
      }
      ctx.fillStyle = theme.text;
      ctx.fillText(lanes[i] ?? '', 6, y + row / 2);
    }

    // Time axis: seconds since the first event, grid lines down through the lanes.
    const origin = f.firstEvent ?? view.start;
    const step = tickStep(view.span, Math.max(2, Math.floor(plotW / 90)));
    ctx.strokeStyle = theme.border;
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(gutter - 0.5, 0);
    ctx.lineTo(gutter - 0.5, h);
    ctx.fillStyle = theme.muted;
    for (let t = Math.ceil((view.start - origin) / step) * step + origin; t <= view.end; t += step) {
      const x = gutter + Math.round(view.xOf(t, plotW)) + 0.5;
      ctx.moveTo(x, axis - 4);
      ctx.lineTo(x, h);
      if (x + 40 < cssWidth) ctx.fillText(formatTick(t - origin, step), x + 3, axis / 2);
    }
    ctx.stroke();

    // Blocked slots under the work, spans, then the spans drawn on top of them, then marks;
    // clipped to the plot.
    const visible = visibleEvents(f.events, view.start, view.end, this.visible);
    const seenVersions = this.seenVersions;
    seenVersions.length = 0;
    ctx.save();
    ctx.beginPath();
    ctx.rect(gutter, axis, plotW, h - axis);
    ctx.clip();
    const inner = row - 2 * rowPad;
    for (let pass = 0; pass < 3; pass++) {
      for (const e of visible) {
        if (isInstant(e) || passOf(e.kind) !== pass) continue;
        const lane = f.laneIndex.get(e.lane);
        if (lane === undefined) continue;
        const x0 = Math.max(gutter - 1, gutter + view.xOf(e.t0, plotW));
        const x1 = Math.min(cssWidth + 1, gutter + view.xOf(e.t1, plotW));
        const w = x1 - x0;
        // In view even when too narrow to draw: the toolbar counts its version.
        if (e.version >= 0 && !seenVersions.includes(e.version)) seenVersions.push(e.version);
        if (w < MIN_SPAN_PX) continue;
        const band = spanBand(e.kind);
        ctx.globalAlpha = band.alpha;
        ctx.fillStyle = e.kind === 'blocked' ? this.hatchOf(ctx) : versionColor(e.version);
        // A 1 px gap at the right end keeps back-to-back spans apart once they are wide enough.
        ctx.fillRect(
          x0,
          axis + lane * row + rowPad + band.top * inner,
          w > 4 ? w - 1 : w,
          band.height * inner,
        );
      }
    }
    ctx.globalAlpha = 1;
    const calls = this.paintCalls(ctx, f, visible);
    ctx.strokeStyle = theme.bg;
    let preempts = 0;
    for (const e of visible) {
      const style = markOf(e);
      const lane = f.laneIndex.get(e.lane);
      if (!style || lane === undefined) continue;
      const t = markTime(e);
      if (t < view.start || t > view.end) continue;
      if (e.kind === 'preempt') preempts += 1;
      const x = gutter + view.xOf(t, plotW);
      const y = axis + lane * row + row / 2;
      ctx.setTransform(dpr, 0, 0, dpr, x * dpr, y * dpr);
      const path = this.pathOf(style.shape, layout);
      ctx.fillStyle = style.color;
      ctx.fill(path);
      if (style.shape !== 'tick') ctx.stroke(path);
    }
    ctx.restore();
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    this.paintFindings(ctx, f);
    return { versions: seenVersions.length, calls, preempts };
  }

  /** A dashed line through the lanes at each finding, under a flag in the axis band. */
  private paintFindings(ctx: CanvasRenderingContext2D, f: TimelineFrame): void {
    const { view, layout, cssWidth, height } = f;
    const plotW = cssWidth - layout.gutter;
    ctx.save();
    ctx.beginPath();
    ctx.rect(layout.gutter, 0, plotW, height);
    ctx.clip();
    ctx.setLineDash([4, 3]);
    ctx.lineWidth = 1;
    for (const m of f.findings ?? []) {
      if (m.t < view.start || m.t > view.end) continue;
      const x = Math.round(layout.gutter + view.xOf(m.t, plotW)) + 0.5;
      ctx.strokeStyle = m.color;
      ctx.fillStyle = m.color;
      ctx.beginPath();
      ctx.moveTo(x, layout.axis);
      ctx.lineTo(x, height);
      ctx.stroke();
      ctx.beginPath();
      ctx.moveTo(x - 5, 0);
      ctx.lineTo(x + 5, 0);
      ctx.lineTo(x, layout.axis - 2);
      ctx.fill();
    }
    ctx.restore();
  }

  /** Ticks at the sandbox calls of the visible spans (`TimelineEvent.calls`); returns how many it drew. */
  private paintCalls(
    ctx: CanvasRenderingContext2D,
    f: TimelineFrame,
    visible: readonly TimelineEvent[],
  ): number {
    const { view, layout, dpr } = f;
    const { gutter, axis, row, rowPad } = layout;
    const plotW = f.cssWidth - gutter;
    const inner = row - 2 * rowPad;
    const half = (CALL_BAND.height * inner) / 2;
    if (this.callPath?.row !== row)
      this.callPath = { row, path: new Path2D(markPath('tick', MARK_RADIUS, half)) };
    const path = this.callPath.path;
    ctx.fillStyle = SANDBOX_CALL.color;
    let drawn = 0;
    for (const e of visible) {
      const lane = f.laneIndex.get(e.lane);
      if (!e.calls || lane === undefined) continue;
      const y = axis + lane * row + rowPad + CALL_BAND.top * inner + half;
      for (const dt of e.calls) {
        const t = e.t0 + dt;
        if (t < view.start || t > view.end) continue;
        const x = gutter + view.xOf(t, plotW);
        ctx.setTransform(dpr, 0, 0, dpr, x * dpr, y * dpr);
        ctx.fill(path);
        drawn += 1;
      }
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    return drawn;
  }

  /** Grey diagonal hatching of blocked slots (a plain grey where a pattern cannot be made). */
  private hatchOf(ctx: CanvasRenderingContext2D): CanvasPattern | string {
    if (this.hatch === undefined) {
      const tile = document.createElement('canvas');
      tile.width = 6;
      tile.height = 6;
      const t = tile.getContext('2d');
      if (t) {
        t.strokeStyle = BLOCKED_SLOT.color;
        t.lineWidth = 1.5;
        t.beginPath();
        t.moveTo(-1, 7);
        t.lineTo(7, -1);
        t.stroke();
      }
      this.hatch = t ? ctx.createPattern(tile, 'repeat') : null;
    }
    return this.hatch ?? BLOCKED_SLOT.color;
  }

  private pathOf(shape: MarkShape, layout: TimelineLayout): Path2D {
    let path = this.markPaths[shape];
    if (!path) {
      const half = (layout.row - 2 * layout.rowPad) / 2;
      path = new Path2D(markPath(shape, MARK_RADIUS, half));
      this.markPaths[shape] = path;
    }
    return path;
  }
}
