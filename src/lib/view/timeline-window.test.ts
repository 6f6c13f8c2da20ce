import { describe, expect, it } from 'vitest';
import type { EventKind, Lane, TimelineEvent } from '../pipeline/events';
import { ViewWindow, visibleEvents } from './timeline-window';

const ev = (lane: Lane, kind: EventKind, t0: number, t1: number, version = 0): TimelineEvent => ({
  lane,
  kind,
  t0,
  t1,
  version,
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
