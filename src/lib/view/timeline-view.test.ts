import { describe, expect, it } from 'vitest';
import type { EventKind, Lane, TimelineEvent } from '../pipeline/events';
import {
  LAYOUT_SIZES,
  ViewWindow,
  bandY,
  callBandY,
  eventExtent,
  formatDuration,
  formatTick,
  hitTest,
  inFlightVersions,
  laneAt,
  laneOrder,
  layoutHeight,
  maxVersionsInFlight,
  tickStep,
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

  it("finds a sandbox call's tick on its episode bar, as the call's instant; below the bar, the span", () => {
    const episode: TimelineEvent = { ...ev('rollout-0', 'episode', 100, 500, 1), calls: [50, 250] };
    const generate = ev('rollout-0', 'generate', 100, 500, 1);
    const adopt = ev('rollout-0', 'adopt', 420, 420, 2);
    const events = [episode, generate, adopt];
    const hit = (x: number, y: number) => hitTest(events, view, layout, width, x, y);
    const ticks = callBandY(2, layout);
    const onTicks = ticks.y + ticks.h / 2;
    expect(hit(xAt(151), onTicks)).toMatchObject({ kind: 'sandbox', t0: 150, t1: 150, version: 1 });
    expect(hit(xAt(351), onTicks)?.t0).toBe(350);
    expect(hit(xAt(351), onTicks)?.meta?.['sandbox call']).toMatch(/^2 of 2/);
    expect(hit(xAt(421), onTicks)).toBe(adopt); // marks stay first
    expect(hit(xAt(200), onTicks)).toBe(episode); // between calls: the episode bar
    expect(hit(xAt(151), yMid(2) + 4)).toBe(generate); // below the ticks: the work under them
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
