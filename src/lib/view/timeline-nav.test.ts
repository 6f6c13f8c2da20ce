import { describe, expect, it } from 'vitest';
import { TimelineNav } from './timeline-nav';

/** A navigator over a 1 000 px plot whose events span [start, end]; counts its `changed` calls. */
function nav(extent: { start: number; end: number } | null, clock = { t: 100_000 }) {
  const calls = { changed: 0 };
  const n = new TimelineNav({
    span: () => 20_000,
    plotWidth: () => 1000,
    extent: () => extent,
    followTime: () => clock.t,
    changed: () => calls.changed++,
  });
  n.view.followNow(clock.t);
  return { n, calls, clock };
}

describe('TimelineNav', () => {
  it('pans by pixels of the plot and leaves follow mode', () => {
    const { n, calls } = nav(null);
    n.panPx(100); // a tenth of the plot: a tenth of the span
    expect(n.view.start).toBe(82_000);
    expect(n.view.follow).toBe(false);
    expect(calls.changed).toBe(1);
  });

  it('zooms a wheel turn around the time under the pointer', () => {
    const { n } = nav(null);
    n.view.setFollow(false);
    n.wheel({ kind: 'zoom', factor: 0.5 }, 250); // pointer at t = 85 000
    expect(n.view.span).toBe(10_000);
    expect(n.view.xOf(85_000, 1000)).toBeCloseTo(250);
  });

  it('zooms out no further than twice the events, at least the first span', () => {
    const { n } = nav({ start: 0, end: 30_000 });
    for (let i = 0; i < 10; i++) n.zoomBy(2);
    expect(n.view.span).toBe(60_000);
  });

  it('maps key commands: arrows pan a tenth, +/− zoom, F follows, A fits', () => {
    const { n } = nav({ start: 50_000, end: 60_000 });
    n.command('pan-left');
    expect(n.view.end).toBe(98_000);
    n.command('zoom-in');
    expect(n.view.span).toBe(10_000);
    n.command('zoom-out');
    expect(n.view.span).toBe(20_000);
    n.command('follow');
    expect(n.view.follow).toBe(true);
    expect(n.view.end).toBe(100_000);
    n.command('fit');
    expect(n.view.follow).toBe(false);
    expect(n.view.start).toBeLessThan(50_000);
    expect(n.view.end).toBeGreaterThan(60_000);
    expect(n.view.span).toBeLessThan(11_000);
  });

  it('shows a short run whole when it ends, and follows the next one when it starts', () => {
    const { n } = nav({ start: 95_000, end: 99_000 });
    n.running(true);
    n.running(false); // ended within the window, following: fitted
    expect(n.view.follow).toBe(false);
    expect(n.view.span).toBeLessThan(5_000);
    n.running(true); // the next leg: followed again
    expect(n.view.follow).toBe(true);
    expect(n.view.end).toBe(100_000);
  });

  it('leaves a long run in the window it was followed in', () => {
    const { n } = nav({ start: 0, end: 99_000 });
    n.running(true);
    n.running(false);
    expect(n.view.follow).toBe(true);
    expect(n.view.span).toBe(20_000);
  });
});
