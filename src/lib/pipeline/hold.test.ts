import { describe, expect, it } from 'vitest';
import { admits, holdAt, holdView, HoldControl, RUNNING, stepFrom, type HoldView } from './hold';

describe('hold', () => {
  it('running admits new work, paused does not, stepping does until its target is published', () => {
    expect(admits(RUNNING, 7)).toBe(true);
    expect(admits({ kind: 'paused' }, 7)).toBe(false);
    const step = { kind: 'stepping', target: 8 } as const;
    expect(admits(step, 7)).toBe(true);
    expect(admits(step, 8)).toBe(false);
    expect(holdAt(step, 8)).toEqual({ kind: 'paused' });
    expect(holdAt(step, 9)).toEqual({ kind: 'paused' }); // a restored trainer may publish past it
  });

  it('a Step aims one version past where the pipeline holds: the step in flight publishes first', () => {
    expect(stepFrom({ kind: 'paused' }, 3, false)).toEqual({ kind: 'stepping', target: 4 });
    expect(stepFrom(RUNNING, 3, false)).toEqual({ kind: 'stepping', target: 4 });
    expect(stepFrom(RUNNING, 3, true)).toEqual({ kind: 'stepping', target: 5 });
    // Under way: not stretched; once its target is published, the next Step is one more.
    expect(stepFrom({ kind: 'stepping', target: 4 }, 3, true)).toBeNull();
    expect(stepFrom({ kind: 'stepping', target: 4 }, 4, false)).toEqual({ kind: 'stepping', target: 5 });
  });

  it('the view tells pausing (work in progress finishing) from paused', () => {
    expect(holdView({ kind: 'paused' }, 2, true)).toEqual({ mode: 'pausing', version: 2, target: null });
    expect(holdView({ kind: 'paused' }, 2, false)).toEqual({ mode: 'paused', version: 2, target: null });
    expect(holdView({ kind: 'stepping', target: 3 }, 2, true)).toEqual({
      mode: 'stepping',
      version: 2,
      target: 3,
    });
    expect(holdView({ kind: 'stepping', target: 3 }, 3, false).mode).toBe('paused');
    expect(holdView(RUNNING, 5, true).mode).toBe('running');
  });

  it('HoldControl schedules again on each change and tells its view only what is news', () => {
    const live = { version: 0, runningGroups: 1, inFlight: null as object | null, ticks: 0 };
    const told: HoldView[] = [];
    const h = new HoldControl(Object.assign(live, { tick: () => (live.ticks += 1) }), (v) => told.push(v));
    h.report();
    live.version = 1;
    h.report();
    expect(told).toEqual([]); // a running run's versions are not news
    h.pause();
    expect(live.ticks).toBe(1);
    h.report();
    expect(told.map((v) => v.mode)).toEqual(['pausing']);
    live.runningGroups = 0;
    h.report();
    h.report();
    expect(told.map((v) => v.mode)).toEqual(['pausing', 'paused']);
    expect(h.step()).toBe(true);
    expect(h.step()).toBe(false);
    h.report();
    expect(told.at(-1)).toEqual({ mode: 'stepping', version: 1, target: 2 });
    live.version = 2;
    h.report();
    expect(told.at(-1)).toEqual({ mode: 'paused', version: 2, target: null });
    expect(h.admits()).toBe(false);
    h.resume();
    expect(h.admits()).toBe(true);
    h.report();
    expect(told.at(-1)?.mode).toBe('running');
  });
});
