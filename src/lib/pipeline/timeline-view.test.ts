import { describe, expect, it } from 'vitest';
import type { EventKind, Lane, TimelineEvent } from './events';
import {
  LAYOUT_SIZES,
  MARKS,
  MARK_KINDS,
  NO_VERSION_COLOR,
  ViewWindow,
  bandY,
  eventExtent,
  formatDuration,
  formatTick,
  hitTest,
  inFlightVersions,
  laneAt,
  laneOrder,
  layoutHeight,
  markOf,
  markPath,
  maxVersionsInFlight,
  tickStep,
  versionColor,
  visibleEvents,
  type TimelineLayout,
} from './timeline-view';

const ev = (lane: Lane, kind: EventKind, t0: number, t1: number, version = 0): TimelineEvent => ({
  lane,
  kind,
  t0,
  t1,
  version,
});

describe('laneOrder', () => {
  it('always has trainer and store, and sorts rollout lanes numerically', () => {
    expect(laneOrder([])).toEqual(['trainer', 'store']);
    const lanes = laneOrder([
      ev('sandbox', 'sandbox', 0, 1),
      ev('rollout-10', 'generate', 0, 1),
      ev('rollout-2', 'generate', 0, 1),
      ev('controller', 'wait', 0, 1),
      ev('rollout-0', 'generate', 0, 1),
      ev('rollout-2', 'episode', 0, 1),
    ]);
    expect(lanes).toEqual([
      'controller',
      'trainer',
      'store',
      'rollout-0',
      'rollout-2',
      'rollout-10',
      'sandbox',
    ]);
  });
});

describe('versionColor', () => {
  it('gives each of the first versions its own hue and grey to no version', () => {
    const hue = (c: string) => Number(/^hsl\(([\d.]+),/.exec(c)?.[1]);
    const hues = Array.from({ length: 12 }, (_, v) => hue(versionColor(v)));
    expect(new Set(hues).size).toBe(12);
    // Neighbouring versions are far apart on the hue circle.
    for (let v = 1; v < hues.length; v++) {
      const d = Math.abs((hues[v] ?? 0) - (hues[v - 1] ?? 0));
      expect(Math.min(d, 360 - d)).toBeGreaterThan(60);
    }
    expect(versionColor(3)).toBe(versionColor(3));
    expect(versionColor(-1)).toBe(NO_VERSION_COLOR);
    expect(versionColor(NaN)).toBe(NO_VERSION_COLOR);
  });
});

describe('marks', () => {
  it('gives every mark kind its own shape and colour', () => {
    const styles = MARK_KINDS.map((k) => MARKS[k]);
    expect(new Set(styles.map((s) => s.shape)).size).toBe(MARK_KINDS.length);
    expect(new Set(styles.map((s) => s.color)).size).toBe(MARK_KINDS.length);
  });

  it('marks mark kinds even as spans, other instants with a tick, other spans not at all', () => {
    expect(markOf(ev('store', 'publish', 0, 5))?.shape).toBe('triangle-up');
    expect(markOf(ev('rollout-0', 'adopt', 5, 5))?.shape).toBe('circle');
    expect(markOf(ev('trainer', 'error', 5, 5))?.shape).toBe('tick');
    expect(markOf(ev('rollout-0', 'generate', 0, 5))).toBeUndefined();
  });

  it('draws every shape as a closed path inside its box', () => {
    const shapes = [...MARK_KINDS.map((k) => MARKS[k].shape), 'tick' as const];
    for (const shape of shapes) {
      const d = markPath(shape, 4, 8);
      expect(d).toMatch(/^M.*Z$/);
      const coords = (d.match(/-?\d+(\.\d+)?/g) ?? []).map(Number);
      expect(Math.max(...coords.map(Math.abs))).toBeLessThanOrEqual(8);
    }
    expect(markPath('bar', 4, 8)).toBe('M-1.5,-8L1.5,-8L1.5,8L-1.5,8Z');
  });
});

describe('ViewWindow', () => {
  it('follows now with a 20 s span by default', () => {
    const w = new ViewWindow();
    expect(w.follow).toBe(true);
    w.followNow(100_000);
    expect([w.start, w.end]).toEqual([80_000, 100_000]);
    w.followNow(100_500);
    expect([w.start, w.end]).toEqual([80_500, 100_500]);
  });

  it('zooms around the anchor, which keeps its x', () => {
    const w = new ViewWindow({ follow: false, end: 10_000, span: 10_000 });
    const anchor = 2_500;
    const xBefore = w.xOf(anchor, 800);
    w.zoom(0.5, anchor);
    expect(w.span).toBe(5_000);
    expect(w.xOf(anchor, 800)).toBeCloseTo(xBefore, 9);
    expect([w.start, w.end]).toEqual([1_250, 6_250]);
  });

  it('keeps the right edge on now when zooming in follow mode', () => {
    const w = new ViewWindow({ span: 10_000 });
    w.followNow(50_000);
    w.zoom(2, 41_000);
    expect([w.start, w.end]).toEqual([30_000, 50_000]);
    expect(w.follow).toBe(true);
  });

  it('clamps the span', () => {
    const w = new ViewWindow({ follow: false, end: 1000, span: 1000, minSpan: 10, maxSpan: 5000 });
    w.zoom(1e-6, 500);
    expect(w.span).toBeCloseTo(10, 9);
    w.zoom(1e6, 500);
    expect(w.span).toBeCloseTo(5000, 9);
    w.zoom(0, 500);
    w.zoom(NaN, 500);
    expect(w.span).toBeCloseTo(5000, 9);
    expect(new ViewWindow({ span: 1e12 }).span).toBe(86_400_000);
  });

  it("zooms out no further than the caller's widest span, and never narrows a wider window doing so", () => {
    const w = new ViewWindow({ follow: false, end: 10_000, span: 10_000 });
    w.zoom(2, 5_000, 15_000);
    expect(w.span).toBe(15_000);
    w.zoom(2, 5_000, 15_000);
    expect(w.span).toBe(15_000);
    w.zoom(0.5, 5_000, 15_000); // zooming in is not bounded by it
    expect(w.span).toBe(7_500);
    const wide = new ViewWindow({ follow: false, end: 10_000, span: 40_000 });
    wide.zoom(2, 5_000, 15_000);
    expect(wide.span).toBe(40_000);
  });

  it('pans and panning turns follow off', () => {
    const w = new ViewWindow({ span: 1000 });
    w.followNow(5000);
    w.pan(-250);
    expect(w.follow).toBe(false);
    expect([w.start, w.end]).toEqual([3750, 4750]);
    w.followNow(9000); // ignored once follow is off
    expect(w.end).toBe(4750);
    w.setFollow(true, 9000);
    expect([w.start, w.end]).toEqual([8000, 9000]);
  });

  it('fits a range with a margin and turns follow off', () => {
    const w = new ViewWindow();
    w.fit(1000, 2000, 0.1);
    expect(w.follow).toBe(false);
    expect(w.start).toBeCloseTo(900, 9);
    expect(w.end).toBeCloseTo(2100, 9);
    w.fit(5000, 5000);
    expect(w.span).toBe(1000);
    expect((w.start + w.end) / 2).toBe(5000);
  });

  it('maps time to x and back', () => {
    const w = new ViewWindow({ follow: false, end: 3000, span: 2000 });
    expect(w.xOf(1000, 400)).toBe(0);
    expect(w.xOf(3000, 400)).toBe(400);
    expect(w.xOf(2000, 400)).toBe(200);
    for (const x of [0, 13.5, 200, 399]) expect(w.xOf(w.tOf(x, 400), 400)).toBeCloseTo(x, 9);
    expect(w.tOf(10, 0)).toBe(1000);
  });
});

describe('visibleEvents', () => {
  it('keeps spans that overlap the window and instants inside it', () => {
    const inside = ev('trainer', 'train-step', 12, 15);
    const straddlesStart = ev('trainer', 'train-step', 5, 11);
    const straddlesEnd = ev('trainer', 'train-step', 19, 30);
    const covers = ev('rollout-0', 'episode', 0, 100);
    const before = ev('trainer', 'train-step', 0, 10);
    const after = ev('trainer', 'train-step', 20, 25);
    const instantIn = ev('store', 'publish', 20, 20);
    const instantOut = ev('store', 'publish', 21, 21);
    const all = [inside, straddlesStart, straddlesEnd, covers, before, after, instantIn, instantOut];
    const out: TimelineEvent[] = [before];
    const visible = visibleEvents(all, 10, 20, out);
    expect(visible).toBe(out);
    expect(visible).toEqual([inside, straddlesStart, straddlesEnd, covers, instantIn]);
  });
});

describe('versions in flight', () => {
  it('counts distinct versions of rollout generate/episode spans at a time', () => {
    const events = [
      ev('rollout-0', 'generate', 0, 10, 1),
      ev('rollout-1', 'episode', 5, 15, 2),
      ev('rollout-2', 'generate', 6, 8, 2),
      ev('trainer', 'train-step', 0, 20, 3), // not a rollout lane
      ev('rollout-3', 'sandbox', 0, 20, 4), // not generate/episode
      ev('rollout-3', 'generate', 0, 20, -1), // no version
    ];
    expect([...inFlightVersions(events, 7)].sort()).toEqual([1, 2]);
    expect([...inFlightVersions(events, 10)]).toEqual([2]); // half-open: [0, 10) has ended
    expect(inFlightVersions(events, 30).size).toBe(0);
    expect(maxVersionsInFlight(events)).toBe(2);
  });

  it('does not count back-to-back spans as overlapping', () => {
    const events = [ev('rollout-0', 'generate', 0, 10, 1), ev('rollout-0', 'generate', 10, 20, 2)];
    expect(maxVersionsInFlight(events)).toBe(1);
    expect(maxVersionsInFlight([])).toBe(0);
  });

  it('agrees with a brute-force count over every span start', () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const events: TimelineEvent[] = [];
    for (let i = 0; i < 300; i++) {
      const t0 = Math.floor(rand() * 1000);
      const lane: Lane = `rollout-${Math.floor(rand() * 4)}`;
      const kind: EventKind = rand() < 0.5 ? 'generate' : 'episode';
      events.push(ev(lane, kind, t0, t0 + 1 + Math.floor(rand() * 60), Math.floor(rand() * 6)));
    }
    let brute = 0;
    for (const e of events) brute = Math.max(brute, inFlightVersions(events, e.t0).size);
    expect(maxVersionsInFlight(events)).toBe(brute);
    expect(brute).toBeGreaterThan(1);
  });
});

describe('layout and hit testing', () => {
  const layout: TimelineLayout = { ...LAYOUT_SIZES, lanes: ['trainer', 'store', 'rollout-0'] };
  const width = LAYOUT_SIZES.gutter + 1000; // 1 px = 1 ms below
  const view = new ViewWindow({ follow: false, end: 1000, span: 1000 });
  const xAt = (t: number) => LAYOUT_SIZES.gutter + t;
  const yMid = (lane: number) => LAYOUT_SIZES.axis + lane * LAYOUT_SIZES.row + LAYOUT_SIZES.row * 0.75;

  it('maps y to lanes', () => {
    expect(layoutHeight(layout)).toBe(LAYOUT_SIZES.axis + 3 * LAYOUT_SIZES.row + 2);
    expect(laneAt(LAYOUT_SIZES.axis - 1, layout)).toBe(-1);
    expect(laneAt(yMid(0), layout)).toBe(0);
    expect(laneAt(yMid(2), layout)).toBe(2);
    expect(laneAt(yMid(3), layout)).toBe(-1);
  });

  it('finds the span under the point, the narrowest when nested, marks first', () => {
    const episode = ev('rollout-0', 'episode', 100, 500, 1);
    const generate = ev('rollout-0', 'generate', 100, 300, 1);
    const sandbox = ev('rollout-0', 'sandbox', 300, 320, 1);
    const step = ev('trainer', 'train-step', 100, 300, 1);
    const adopt = ev('rollout-0', 'adopt', 600, 600, 2);
    const events = [episode, generate, sandbox, step, adopt];
    const hit = (x: number, y: number) => hitTest(events, view, layout, width, x, y);
    expect(hit(xAt(200), yMid(0))).toBe(step);
    expect(hit(xAt(200), yMid(2))).toBe(generate);
    const episodeBar = bandY('episode', 2, layout);
    expect(hit(xAt(400), episodeBar.y + episodeBar.h / 2)).toBe(episode);
    const sandboxBand = bandY('sandbox', 2, layout);
    expect(hit(xAt(310), sandboxBand.y + sandboxBand.h / 2)).toBe(sandbox);
    expect(hit(xAt(601), yMid(2))).toBe(adopt);
    expect(hit(xAt(800), yMid(2))).toBeUndefined();
    expect(hit(10, yMid(2))).toBeUndefined(); // on the labels
    expect(hit(xAt(200), yMid(1))).toBeUndefined(); // nothing in the store lane
    // A span too narrow to be drawn is not hit either.
    const tiny = ev('trainer', 'train-step', 700.1, 700.3, 1);
    expect(hitTest([tiny], view, layout, width, xAt(700.2), yMid(0))).toBeUndefined();
  });
});

describe('axis and labels', () => {
  it('picks 1-2-5 tick steps', () => {
    expect(tickStep(20_000, 10)).toBe(2000);
    expect(tickStep(1000, 4)).toBe(500);
    expect(tickStep(7, 10)).toBe(1);
    expect(tickStep(0, 10)).toBe(1);
  });

  it('formats ticks and durations', () => {
    expect(formatTick(12_000, 2000)).toBe('12 s');
    expect(formatTick(12_500, 500)).toBe('12.5 s');
    expect(formatTick(1_234, 2)).toBe('1.234 s');
    expect(formatDuration(0.25)).toBe('250 µs');
    expect(formatDuration(3.14159)).toBe('3.14 ms');
    expect(formatDuration(250)).toBe('250.0 ms');
    expect(formatDuration(1500)).toBe('1.500 s');
  });

  it('measures the extent of the events', () => {
    expect(eventExtent([])).toBeNull();
    expect(eventExtent([ev('trainer', 'init', 5, 9), ev('store', 'publish', 2, 2)])).toEqual({
      start: 2,
      end: 9,
    });
  });
});
