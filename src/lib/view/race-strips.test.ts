import { describe, expect, it } from 'vitest';
import { ev, syncLeg } from '../stats/leg-strip.fakes';
import { legStrip, type LegStrip } from '../stats/leg-strip';
import { legWords, raceStrips, raceWords, stripLabel, type StripView } from './race-strips';

describe('raceStrips', () => {
  const sync = legStrip(syncLeg(10_000)) as LegStrip;

  it('draws the finished leg beside the running one, each from its own start on one time scale', () => {
    // The asynchronous leg started at 30 s; it is 2.5 s in.
    const live = [ev('rollout-0', 'generate', 30_000, 31_000), ev('rollout-1', 'generate', 30_000, 31_000)];
    live.push(ev('trainer', 'train-step', 31_000, 32_000));
    const view = raceStrips([sync], live, [0, 4], 32_500);
    expect(view.strips.map((s) => [s.leg, s.state, s.name, s.origin])).toEqual([
      ['sync', 'done', 'synchronous (η = 0)', 10_000],
      ['async', 'live', 'asynchronous (η = 4)', 30_000],
    ]);
    // The shared window is the longer leg's length: the synchronous leg's 6 s.
    expect(view.span).toBe(6000);
    expect(view.strips.map((s) => s.trainerSpans)).toEqual([2, 1]);
    // Both strips have the same lanes, so that they line up.
    expect(view.layout.lanes).toEqual(['trainer', 'rollout-0', 'rollout-1']);
  });

  it('grows the shared window with a running leg that outlasts the finished one', () => {
    const live = [ev('trainer', 'train-step', 30_000, 31_000)];
    expect(raceStrips([sync], live, [0, 4], 39_000).span).toBe(9000);
  });

  it('waits for the first leg, and ignores the finished leg’s events until the next leg starts', () => {
    const first = raceStrips([], syncLeg(10_000), [0, 8], 13_000);
    expect(first.strips.map((s) => s.state)).toEqual(['live', 'waiting']);
    expect(first.strips[1]?.name).toBe('asynchronous (η = 8)');
    expect(first.span).toBe(3000);
    // Between the legs the view still holds the synchronous leg's events.
    const between = raceStrips([sync], syncLeg(10_000), [0, 4], 20_000);
    expect(between.strips[1]).toMatchObject({ state: 'live', origin: null, trainerSpans: 0 });
    expect(between.span).toBe(6000);
    // A race stopped in its second leg keeps the first strip; the second is not drawn.
    const stopped = raceStrips([sync], null, [0, 4], 0, true);
    expect(stopped.strips.map((s) => s.state)).toEqual(['done', 'stopped']);
    expect(stripLabel(stopped.strips[1] as StripView, 2)).toContain('stopped before this leg');
    const none = raceStrips([], null, [0, 4], 0);
    expect(none.strips.map((s) => s.state)).toEqual(['waiting', 'waiting']);
    expect(none.span).toBe(1000);
  });

  it('counts the trainer spans, not the trainer lane’s instants', () => {
    const longSync = legStrip([
      ...syncLeg(0),
      ev('trainer', 'stale-drop', 6500, 6500),
      ev('trainer', 'train-step', 7000, 8000),
    ]) as LegStrip;
    const shortAsync = legStrip([ev('trainer', 'train-step', 20_000, 21_000)]) as LegStrip;
    const view = raceStrips([longSync, shortAsync], null, [0, 4], 0);
    expect(view.span).toBe(8000);
    expect(view.strips.map((s) => [s.state, s.trainerSpans])).toEqual([
      ['done', 3],
      ['done', 1],
    ]);
  });
});

describe('race words', () => {
  const sync = { eta: 0, samplesPerSec: 10, trainerBusy: 0.55 };
  const async = { eta: 4, samplesPerSec: 16.2, trainerBusy: 0.92 };

  it('says the speedup and both trainers’ busy shares once both legs are done', () => {
    expect(raceWords([sync, async])).toBe(
      'asynchronous: 1.62× the synchronous rate — its trainer was busy 92% of the time against 55%',
    );
    expect(raceWords([sync])).toBeNull();
    expect(legWords(sync)).toBe('synchronous (η = 0): 10.0 episodes/s, trainer busy 55%');
    expect(legWords({ ...async, eta: Infinity })).toContain('asynchronous (η = ∞)');
  });

  it('labels each strip for screen readers', () => {
    const view = raceStrips([legStrip(syncLeg(0))], null, [0, 4], 0);
    const [done, waiting] = view.strips;
    if (!done || !waiting) throw new Error('two strips expected');
    expect(stripLabel(done, 2)).toBe(
      'Timeline strip of the synchronous (η = 0) leg: 2 trainer spans in 2 lanes (the trainer and the rollout workers), 6.0 s',
    );
    expect(stripLabel(waiting, 2)).toContain('waits for the leg before it');
  });
});
