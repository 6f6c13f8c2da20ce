import { describe, expect, it } from 'vitest';
import type { EventKind, Lane, TimelineEvent } from '../pipeline/events';
import {
  MARKS,
  MARK_KINDS,
  NO_VERSION_COLOR,
  SANDBOX_CALL,
  BLOCKED_SLOT,
  callEvent,
  drawsOnTop,
  drawsUnder,
  spanBand,
  callTimes,
  legendMarks,
  markOf,
  strategySwitchLine,
  markPath,
  versionColor,
} from './timeline-marks';

const ev = (lane: Lane, kind: EventKind, t0: number, t1: number, version = 0): TimelineEvent => ({
  lane,
  kind,
  t0,
  t1,
  version,
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

describe('sandbox calls', () => {
  const group: TimelineEvent = {
    ...ev('rollout-1', 'episode', 1000, 1400, 3),
    meta: { job: 7, task: 'tool:linear:2*x+1', episodes: 2, solved: 0 },
    calls: [20, 90, 300],
  };

  it("places each call of an episode group's span at its start, after t0", () => {
    expect(callTimes(group)).toEqual([1020, 1090, 1300]);
    expect(callTimes(ev('rollout-0', 'episode', 0, 10))).toEqual([]); // an event without calls
  });

  it("shows a call as an instant of the group's lane and version, saying which call of how many and of which task", () => {
    const call = callEvent(group, 1);
    expect(call).toMatchObject({ lane: 'rollout-1', kind: 'sandbox', t0: 1090, t1: 1090, version: 3 });
    expect(call.meta).toEqual({
      'sandbox call': '2 of 3 in the group (<run> or <submit>)',
      task: 'tool:linear:2*x+1',
      job: 7,
    });
  });

  it('has a tick of its own colour, apart from every other mark', () => {
    expect(SANDBOX_CALL.shape).toBe('tick');
    const colours = [...MARK_KINDS.map((k) => MARKS[k].color), markOf(ev('trainer', 'error', 1, 1))?.color];
    expect(colours).not.toContain(SANDBOX_CALL.color);
  });
});

describe('strategy switches', () => {
  const sw: TimelineEvent = {
    ...ev('trainer', 'strategy', 50, 50, 12),
    meta: { from: 'full', to: 'selective', reason: 'poor and falling (performance 0.30, …)' },
  };

  it("draws auto's switch as a mark of its own, listed in the legend only once one happened", () => {
    expect(markOf(sw)).toBe(MARKS.strategy);
    expect(MARKS.strategy.shape).toBe('star');
    expect(legendMarks(MARK_KINDS, [ev('store', 'publish', 0, 0)])).not.toContain('strategy');
    expect(legendMarks(MARK_KINDS, [sw])).toContain('strategy');
    expect(legendMarks(['publish'], [sw])).toEqual(['publish']); // a pipeline that cannot switch
  });

  it('heads its tooltip with the switch; the reason is its meta', () => {
    expect(strategySwitchLine(sw)).toBe('full → selective');
    expect(strategySwitchLine(ev('store', 'publish', 0, 0))).toBeNull();
  });
});

describe('blocked slots', () => {
  it('draws a blocked stretch as a span without a mark, under the work, across the work band', () => {
    const e = ev('rollout-0', 'blocked', 0, 100, -1);
    expect(markOf(e)).toBeUndefined();
    expect(drawsUnder('blocked')).toBe(true);
    expect(drawsOnTop('blocked')).toBe(false);
    expect(drawsUnder('generate')).toBe(false);
    expect(spanBand('blocked')).toMatchObject({
      top: spanBand('generate').top,
      height: spanBand('generate').height,
    });
    expect(BLOCKED_SLOT.label).toContain('η');
    expect(Object.values(MARKS).map((m) => m.color)).not.toContain(BLOCKED_SLOT.color);
  });
});
