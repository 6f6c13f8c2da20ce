/**
 * Input and frame pacing of the live timeline (DESIGN §9), apart from the component so that the
 * logic can be tested in node: what a wheel turn or a key asks for, where the tooltip goes, how
 * far one may zoom out, and a redraw loop that runs at most every so often while a run goes on.
 */

/** Zoom factor per pixel of wheel delta. */
export const WHEEL_ZOOM = 0.002;
/** Width of the tooltip, CSS px. */
export const TOOLTIP_WIDTH = 240;
/**
 * While a run goes on, the live redraw happens at most this often, ms: enough to follow it,
 * and it leaves the main thread (the controller) to the pipeline. A change redraws at once.
 */
export const LIVE_FRAME_MS = 100;

/** What a wheel turn asks for: a pan by `px` CSS px (positive: later), or a zoom by `factor`. */
export type WheelIntent = { kind: 'pan'; px: number } | { kind: 'zoom'; factor: number };

/** A horizontal turn pans, a vertical one zooms (deltas in lines or pages count as 16 or 400 px). */
export function wheelIntent(deltaX: number, deltaY: number, deltaMode: number): WheelIntent {
  const unit = deltaMode === 1 ? 16 : deltaMode === 2 ? 400 : 1;
  const dx = deltaX * unit;
  const dy = deltaY * unit;
  return Math.abs(dx) > Math.abs(dy)
    ? { kind: 'pan', px: dx }
    : { kind: 'zoom', factor: Math.exp(dy * WHEEL_ZOOM) };
}

/** What a key asks of the timeline. */
export type TimelineCommand = 'pan-left' | 'pan-right' | 'zoom-in' | 'zoom-out' | 'follow' | 'fit';

const KEYS: Readonly<Record<string, TimelineCommand>> = {
  ArrowLeft: 'pan-left',
  ArrowRight: 'pan-right',
  '+': 'zoom-in',
  '=': 'zoom-in',
  '-': 'zoom-out',
  f: 'follow',
  a: 'fit',
};

/**
 * Keyboard: arrows pan a tenth of the window, + and − zoom, F toggles follow, A fits all; null
 * for any other key, and with Ctrl, Meta or Alt held (the browser's shortcuts).
 */
export function keyCommand(
  ev: Pick<KeyboardEvent, 'key' | 'ctrlKey' | 'metaKey' | 'altKey'>,
): TimelineCommand | null {
  const command = KEYS[ev.key.length === 1 ? ev.key.toLowerCase() : ev.key];
  return !command || ev.ctrlKey || ev.metaKey || ev.altKey ? null : command;
}

/** Left edge of the tooltip: right of the pointer, or left of it where it would overflow the canvas. */
export function tooltipLeft(x: number, cssWidth: number, width = TOOLTIP_WIDTH): number {
  return x + 12 + width > cssWidth ? Math.max(0, x - 12 - width) : x + 12;
}

/**
 * How far one may zoom out: twice the events' extent (at least the first span). Past it the
 * run is squeezed into a sliver at one edge (a day's window showed 169 s of run as nothing).
 */
export function widestSpan(extent: { start: number; end: number } | null, span: number): number {
  return extent ? Math.max(span, 2 * (extent.end - extent.start)) : span;
}

/** Adds a listener; returns what removes it. */
export function listen<K extends keyof HTMLElementEventMap>(
  el: HTMLElement,
  type: K,
  fn: (ev: HTMLElementEventMap[K]) => void,
  opts?: AddEventListenerOptions,
): () => void {
  el.addEventListener(type, fn, opts);
  return () => el.removeEventListener(type, fn);
}

/** Animation frames (the browser's, or a test's). Handles are never 0. */
export interface FrameClock {
  request(cb: (t: number) => void): number;
  cancel(handle: number): void;
}

const browserFrames: FrameClock = {
  request: (cb) => requestAnimationFrame(cb),
  cancel: (handle) => cancelAnimationFrame(handle),
};

/**
 * Redraws at the next frame after `schedule()` (something changed: events, view, size), and
 * while `live()` keeps going frame after frame, drawing at most every `everyMs`.
 */
export class FrameLoop {
  private handle = 0;
  private destroyed = false;
  private lastDraw = 0;
  private dirty = true;

  constructor(
    private readonly draw: () => void,
    private readonly live: () => boolean,
    private readonly everyMs = LIVE_FRAME_MS,
    private readonly clock: FrameClock = browserFrames,
  ) {}

  /** Redraws at the next frame. */
  schedule(): void {
    this.dirty = true;
    if (this.handle === 0 && !this.destroyed) this.handle = this.clock.request(this.frame);
  }

  /** Stops the loop for good (the component is gone). */
  destroy(): void {
    this.destroyed = true;
    if (this.handle !== 0) this.clock.cancel(this.handle);
    this.handle = 0;
  }

  private readonly frame = (t: number): void => {
    this.handle = 0;
    if (this.dirty || t - this.lastDraw >= this.everyMs) {
      this.draw();
      this.lastDraw = t;
      this.dirty = false;
    }
    if (this.live() && this.handle === 0 && !this.destroyed) this.handle = this.clock.request(this.frame);
  };
}
