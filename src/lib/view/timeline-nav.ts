/**
 * Navigation of the live timeline (DESIGN §9): wheel, drag, keys and toolbar buttons turned into
 * moves of its `ViewWindow`, and what the window does when a run ends or starts.
 */
import { ViewWindow } from './timeline-view';
import { widestSpan, type TimelineCommand, type WheelIntent } from './timeline-input';

/** What the navigator reads from the component, and how it tells it that the view moved. */
export interface TimelineNavOptions {
  /** Span of the window on first show, ms (read again: the least one may zoom out to). */
  span(): number;
  /** Width of the plot, CSS px (≥ 1). */
  plotWidth(): number;
  /** Earliest and latest time of the events, or null when there are none. */
  extent(): { start: number; end: number } | null;
  /** The right edge in follow mode: now while running, else the last event. */
  followTime(): number;
  /** The view changed: the toolbar's mirrors follow and the canvas redraws. */
  changed(): void;
}

/** Moves a `ViewWindow` in answer to the user's input. */
export class TimelineNav {
  readonly view: ViewWindow;
  private wasRunning = false;

  constructor(private readonly opts: TimelineNavOptions) {
    this.view = new ViewWindow({ span: opts.span() });
  }

  /** Pans by `px` CSS px of the plot (positive: later). */
  panPx(px: number): void {
    this.view.pan((px / this.opts.plotWidth()) * this.view.span);
    this.opts.changed();
  }

  /** A wheel turn with the pointer `x` px into the plot: pans, or zooms around the pointer's time. */
  wheel(intent: WheelIntent, x: number): void {
    if (intent.kind === 'pan') {
      this.panPx(intent.px);
      return;
    }
    this.view.zoom(intent.factor, this.view.tOf(x, this.opts.plotWidth()), this.widest());
    this.opts.changed();
  }

  /** Zooms by `factor` (< 1 zooms in) around the window's middle. */
  zoomBy(factor: number): void {
    const { view } = this;
    view.zoom(factor, (view.start + view.end) / 2, this.widest());
    this.opts.changed();
  }

  toggleFollow(): void {
    this.view.setFollow(!this.view.follow, this.opts.followTime());
    this.opts.changed();
  }

  /** Shows every event. */
  fitAll(): void {
    const extent = this.opts.extent();
    if (extent) this.view.fit(extent.start, extent.end);
    this.opts.changed();
  }

  /** A key's command (see `keyCommand`): arrows pan a tenth of the window. */
  command(c: TimelineCommand): void {
    if (c === 'pan-left' || c === 'pan-right') {
      this.view.pan(((c === 'pan-left' ? -1 : 1) * this.view.span) / 10);
      this.opts.changed();
    } else if (c === 'zoom-in') this.zoomBy(0.5);
    else if (c === 'zoom-out') this.zoomBy(2);
    else if (c === 'follow') this.toggleFollow();
    else this.fitAll();
  }

  /**
   * The run state, whenever it may have changed. A run that ended within the window (a short one)
   * is shown whole, not squeezed at its right edge; the next run to start (the next leg of a
   * sweep) is followed again, not left off-screen.
   */
  running(running: boolean): void {
    const ended = this.wasRunning && !running;
    const started = !this.wasRunning && running;
    this.wasRunning = running;
    if (ended && this.view.follow) {
      const extent = this.opts.extent();
      if (extent && extent.end - extent.start < this.view.span) this.fitAll();
    }
    if (started && !this.view.follow) {
      this.view.setFollow(true, this.opts.followTime());
      this.opts.changed();
    }
  }

  private widest(): number {
    return widestSpan(this.opts.extent(), this.opts.span());
  }
}
