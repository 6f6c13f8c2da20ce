import { describe, expect, it } from 'vitest';
import {
  FrameLoop,
  TOOLTIP_WIDTH,
  WHEEL_ZOOM,
  keyCommand,
  tooltipLeft,
  wheelIntent,
  widestSpan,
  type FrameClock,
} from './timeline-input';

const key = (k: string, mods: Partial<Record<'ctrlKey' | 'metaKey' | 'altKey', boolean>> = {}) => ({
  key: k,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  ...mods,
});

describe('wheelIntent', () => {
  it('pans on a mostly horizontal turn and zooms on a vertical one', () => {
    expect(wheelIntent(30, 10, 0)).toEqual({ kind: 'pan', px: 30 });
    expect(wheelIntent(10, 100, 0)).toEqual({ kind: 'zoom', factor: Math.exp(100 * WHEEL_ZOOM) });
    const zoomIn = wheelIntent(0, -50, 0);
    expect(zoomIn.kind === 'zoom' && zoomIn.factor < 1).toBe(true);
  });

  it('counts lines as 16 px and pages as 400 px', () => {
    expect(wheelIntent(2, 0, 1)).toEqual({ kind: 'pan', px: 32 });
    expect(wheelIntent(0, 1, 2)).toEqual({ kind: 'zoom', factor: Math.exp(400 * WHEEL_ZOOM) });
  });
});

describe('keyCommand', () => {
  it('maps arrows, + = −, F and A (either case)', () => {
    expect(keyCommand(key('ArrowLeft'))).toBe('pan-left');
    expect(keyCommand(key('ArrowRight'))).toBe('pan-right');
    expect(keyCommand(key('+'))).toBe('zoom-in');
    expect(keyCommand(key('='))).toBe('zoom-in');
    expect(keyCommand(key('-'))).toBe('zoom-out');
    expect(keyCommand(key('F'))).toBe('follow');
    expect(keyCommand(key('a'))).toBe('fit');
  });

  it('leaves other keys and modified keys to the browser', () => {
    expect(keyCommand(key('x'))).toBeNull();
    expect(keyCommand(key('ArrowUp'))).toBeNull();
    expect(keyCommand(key('a', { ctrlKey: true }))).toBeNull();
    expect(keyCommand(key('+', { metaKey: true }))).toBeNull();
    expect(keyCommand(key('f', { altKey: true }))).toBeNull();
  });
});

describe('tooltipLeft and widestSpan', () => {
  it('puts the tooltip right of the pointer, or left of it near the right edge', () => {
    expect(tooltipLeft(100, 1000)).toBe(112);
    expect(tooltipLeft(900, 1000)).toBe(900 - 12 - TOOLTIP_WIDTH);
    expect(tooltipLeft(100, 200)).toBe(0);
  });

  it('lets one zoom out to twice the extent, at least the first span', () => {
    expect(widestSpan(null, 20_000)).toBe(20_000);
    expect(widestSpan({ start: 0, end: 5_000 }, 20_000)).toBe(20_000);
    expect(widestSpan({ start: 1_000, end: 61_000 }, 20_000)).toBe(120_000);
  });
});

/** Frames run by hand: `tick(t)` runs the pending callback at time t. */
function fakeFrames(): FrameClock & { pending: () => boolean; tick: (t: number) => void } {
  let next = 1;
  let queued: { handle: number; cb: (t: number) => void } | null = null;
  return {
    request(cb) {
      queued = { handle: next++, cb };
      return queued.handle;
    },
    cancel(handle) {
      if (queued?.handle === handle) queued = null;
    },
    pending: () => queued !== null,
    tick(t) {
      const q = queued;
      queued = null;
      q?.cb(t);
    },
  };
}

describe('FrameLoop', () => {
  it('draws once after a change, and stops when nothing is live', () => {
    const clock = fakeFrames();
    let draws = 0;
    const loop = new FrameLoop(
      () => draws++,
      () => false,
      100,
      clock,
    );
    loop.schedule();
    loop.schedule(); // one frame for both
    clock.tick(16);
    expect(draws).toBe(1);
    expect(clock.pending()).toBe(false);
  });

  it('while live, redraws at most every everyMs unless something changed', () => {
    const clock = fakeFrames();
    let draws = 0;
    const loop = new FrameLoop(
      () => draws++,
      () => true,
      100,
      clock,
    );
    loop.schedule();
    clock.tick(0);
    clock.tick(50); // too soon, nothing changed
    expect(draws).toBe(1);
    clock.tick(100);
    expect(draws).toBe(2);
    loop.schedule();
    clock.tick(120); // changed: at once
    expect(draws).toBe(3);
    expect(clock.pending()).toBe(true);
  });

  it('draws nothing more once destroyed', () => {
    const clock = fakeFrames();
    let draws = 0;
    const loop = new FrameLoop(
      () => draws++,
      () => true,
      100,
      clock,
    );
    loop.schedule();
    loop.destroy();
    expect(clock.pending()).toBe(false);
    loop.schedule();
    clock.tick(16);
    expect(draws).toBe(0);
  });
});
