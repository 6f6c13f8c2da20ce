import { describe, expect, it } from 'vitest';
import type { Lane, TimelineEvent } from '../pipeline/events';
import {
  toChromeTrace,
  traceFileName,
  type TraceCompleteEvent,
  type TraceEvent,
  type TraceInstantEvent,
  type TraceMetadataEvent,
} from './trace';

const T = 1_700_000_000_000.25; // an epoch time with a sub-millisecond part

const ev = (lane: Lane, kind: TimelineEvent['kind'], t0: number, t1: number, version = 0): TimelineEvent => ({
  lane,
  kind,
  t0: T + t0,
  t1: T + t1,
  version,
});

const spans = (events: TraceEvent[]) => events.filter((e): e is TraceCompleteEvent => e.ph === 'X');
const instants = (events: TraceEvent[]) => events.filter((e): e is TraceInstantEvent => e.ph === 'i');
const metadata = (events: TraceEvent[]) => events.filter((e): e is TraceMetadataEvent => e.ph === 'M');

/** thread_name of each tid. */
function threadNames(events: TraceEvent[]): Map<number, string> {
  const names = new Map<number, string>();
  for (const m of metadata(events)) if (m.name === 'thread_name') names.set(m.tid, m.args.name);
  return names;
}

describe('toChromeTrace', () => {
  it('converts epoch milliseconds to microseconds from the earliest event', () => {
    const trace = toChromeTrace([
      ev('trainer', 'train-step', 12.5, 20.25, 3),
      ev('rollout-0', 'generate', 2, 12.5, 2),
    ]);
    const [first, second] = spans(trace.traceEvents);
    expect(first).toMatchObject({ name: 'generate', cat: 'rollout-0', ts: 0, dur: 10_500, pid: 1 });
    expect(second).toMatchObject({ name: 'train-step', cat: 'trainer', ts: 10_500, dur: 7_750 });
    expect(trace.displayTimeUnit).toBe('ms');
    expect(trace.otherData?.originEpochMs).toBe(T + 2);
    expect(trace.otherData?.origin).toBe(new Date(T + 2).toISOString());
  });

  it('makes instants (t0 === t1) thread-scoped instant events and spans complete events', () => {
    const trace = toChromeTrace([
      ev('store', 'publish', 5, 9, 1),
      ev('rollout-1', 'adopt', 9, 9, 1),
      ev('rollout-1', 'interrupt', 10, 10, 0),
    ]);
    expect(spans(trace.traceEvents).map((e) => e.name)).toEqual(['publish']);
    const marks = instants(trace.traceEvents);
    expect(marks.map((e) => [e.name, e.s, e.ts])).toEqual([
      ['adopt', 't', 4000],
      ['interrupt', 't', 5000],
    ]);
    expect(marks.every((e) => !('dur' in e))).toBe(true);
  });

  it("puts a span's sandbox calls on its thread as instants at their offsets", () => {
    const episode = { ...ev('rollout-0', 'episode', 2, 12, 4), calls: [1, 6.5] };
    const trace = toChromeTrace([episode]);
    const [span] = spans(trace.traceEvents);
    const calls = instants(trace.traceEvents);
    expect(calls.map((e) => [e.name, e.ts, e.tid, e.args.call, e.args.of])).toEqual([
      ['sandbox call', 1000, span?.tid, 1, 2],
      ['sandbox call', 6500, span?.tid, 2, 2],
    ]);
    expect(span?.args).not.toHaveProperty('calls');
  });

  it('gives each lane one stable tid and sorts lanes controller, trainer, store, rollout-N, sandbox', () => {
    const events = [
      ev('sandbox', 'sandbox', 0, 1),
      ev('rollout-10', 'generate', 1, 2),
      ev('rollout-2', 'generate', 2, 3),
      ev('store', 'publish', 3, 4),
      ev('trainer', 'train-step', 4, 5),
      ev('controller', 'wait', 5, 6),
      ev('rollout-10', 'episode', 6, 7),
      ev('rollout-2', 'episode', 7, 8),
    ];
    const trace = toChromeTrace(events);
    const names = threadNames(trace.traceEvents);
    // Each span carries the tid its lane was named with.
    for (const s of spans(trace.traceEvents)) expect(names.get(s.tid)).toBe(s.cat);
    const sortIndex = new Map<string, number>();
    for (const m of metadata(trace.traceEvents)) {
      if (m.name === 'thread_sort_index') sortIndex.set(names.get(m.tid) ?? '?', m.args.sort_index);
    }
    const bySort = [...sortIndex].sort((a, b) => a[1] - b[1]).map(([lane]) => lane);
    expect(bySort).toEqual(['controller', 'trainer', 'store', 'rollout-2', 'rollout-10', 'sandbox']);
    // The same lanes in another order give the same tids.
    const again = toChromeTrace([...events].reverse());
    expect(threadNames(again.traceEvents)).toEqual(names);
  });

  it('names the process and every lane', () => {
    const trace = toChromeTrace([ev('trainer', 'init', 0, 3), ev('rollout-0', 'generate', 1, 2)], {
      title: 'my run',
    });
    const meta = metadata(trace.traceEvents);
    expect(meta).toContainEqual({ ph: 'M', name: 'process_name', pid: 1, tid: 0, args: { name: 'my run' } });
    expect([...threadNames(trace.traceEvents).values()].sort()).toEqual(['rollout-0', 'trainer']);
    expect(trace.otherData?.title).toBe('my run');
    // Metadata comes before the events.
    const firstEvent = trace.traceEvents.findIndex((e) => e.ph !== 'M');
    expect(trace.traceEvents.slice(firstEvent).every((e) => e.ph !== 'M')).toBe(true);
  });

  it('puts the version and meta in args', () => {
    const e: TimelineEvent = {
      ...ev('trainer', 'train-step', 0, 4, 7),
      meta: { loss: 0.5, env: 'code', ok: true },
    };
    const [span] = spans(toChromeTrace([e]).traceEvents);
    expect(span?.args).toEqual({ version: 7, loss: 0.5, env: 'code', ok: true });
  });

  it('survives a JSON round trip unchanged', () => {
    const events = [
      { ...ev('trainer', 'train-step', 0, 4.123456, 1), meta: { loss: 0.25 } },
      ev('rollout-3', 'stale-drop', 2, 2, -1),
      ev('store', 'publish', 4.2, 5.9, 2),
    ];
    const trace = toChromeTrace(events);
    expect(JSON.parse(JSON.stringify(trace))).toEqual(trace);
    // Epoch milliseconds near 1.7e12 carry about a quarter of a microsecond of precision.
    expect(Math.abs((spans(trace.traceEvents)[0]?.dur ?? 0) - 4123.456)).toBeLessThan(0.5);
  });

  it('handles no events and leaves out events with non-finite times', () => {
    const empty = toChromeTrace([]);
    expect(empty.traceEvents).toHaveLength(1);
    expect(empty.traceEvents[0]).toMatchObject({ ph: 'M', name: 'process_name' });
    const trace = toChromeTrace([ev('trainer', 'init', 0, 1), { ...ev('trainer', 'init', 0, 1), t1: NaN }]);
    expect(spans(trace.traceEvents)).toHaveLength(1);
  });
});

/** Start and end of a span in integer nanoseconds, as a viewer reads `ts` and `ts + dur`. */
const nanos = (s: TraceCompleteEvent): [number, number] => {
  const start = Math.round(s.ts * 1e3);
  return [start, start + Math.round(s.dur * 1e3)];
};

/** Pairs of complete events on one (pid, tid) that overlap without one containing the other. */
function partialOverlaps(events: TraceEvent[]): string[] {
  const byTrack = new Map<string, TraceCompleteEvent[]>();
  for (const s of spans(events)) {
    const key = `${s.pid}/${s.tid}`;
    byTrack.set(key, [...(byTrack.get(key) ?? []), s]);
  }
  const bad: string[] = [];
  for (const [key, track] of byTrack) {
    for (const [i, x] of track.entries()) {
      for (const y of track.slice(i + 1)) {
        const [x0, x1] = nanos(x);
        const [y0, y1] = nanos(y);
        const disjoint = x1 <= y0 || y1 <= x0;
        const nested = (x0 <= y0 && y1 <= x1) || (y0 <= x0 && x1 <= y1);
        if (!disjoint && !nested) bad.push(`${key}: ${x.name}[${x0},${x1}] × ${y.name}[${y0},${y1}]`);
      }
    }
  }
  return bad;
}

describe('toChromeTrace with overlapping spans on a lane', () => {
  // Two slots on rollout-0: job A's episode [0, 10] and job B's [3, 15] overlap; the decode
  // segments run across both and one closes after A's episode ended (generate [4, 12]).
  const overlapping: TimelineEvent[] = [
    ev('rollout-0', 'episode', 0, 10, 1),
    ev('rollout-0', 'generate', 0, 4, 1),
    ev('rollout-0', 'episode', 3, 15, 1),
    ev('rollout-0', 'adopt', 4, 4, 2),
    ev('rollout-0', 'generate', 4, 12, 2),
    ev('rollout-0', 'interrupt', 12, 12, 2),
    ev('rollout-0', 'generate', 12, 15, 2),
    ev('rollout-0', 'wait', 15, 16, 2),
    // Equal spans, and three spans each overlapping the next.
    ev('rollout-0', 'episode', 20, 30, 2),
    ev('rollout-0', 'generate', 20, 30, 2),
    ev('rollout-0', 'episode', 40, 50, 2),
    ev('rollout-0', 'episode', 45, 55, 2),
    ev('rollout-0', 'episode', 48, 60, 2),
    ev('rollout-0', 'stale-drop', 50, 50, 1),
    // Another lane that overlaps in time with rollout-0 but not within itself.
    ev('rollout-1', 'episode', 1, 9, 1),
    ev('rollout-1', 'generate', 1, 9, 1),
    ev('rollout-1', 'preempt', 9, 9, 1),
    // Properly nested spans on one lane.
    ev('trainer', 'init', 0, 40, 0),
    ev('trainer', 'train-step', 2, 6, 1),
    ev('store', 'publish', 6, 7, 2),
  ];

  it('nests the complete events on every (pid, tid) perfectly and loses no span', () => {
    const trace = toChromeTrace(overlapping);
    expect(partialOverlaps(trace.traceEvents)).toEqual([]);
    const input = overlapping.filter((e) => e.t1 > e.t0);
    const out = spans(trace.traceEvents);
    expect(out).toHaveLength(input.length);
    // The same spans (lane, kind, duration), and the same total duration per lane.
    const key = (lane: string, kind: string, dur: number) => `${lane} ${kind} ${Math.round(dur * 1e3)}`;
    expect(out.map((s) => key(s.cat, s.name, s.dur)).sort()).toEqual(
      input.map((e) => key(e.lane, e.kind, (e.t1 - e.t0) * 1e3)).sort(),
    );
    for (const lane of new Set(input.map((e) => e.lane))) {
      const want = input.filter((e) => e.lane === lane).reduce((sum, e) => sum + (e.t1 - e.t0) * 1e3, 0);
      const got = out.filter((s) => s.cat === lane).reduce((sum, s) => sum + s.dur, 0);
      expect(got).toBeCloseTo(want, 3);
    }
    // Every instant is kept, on its lane's own thread.
    const names = threadNames(trace.traceEvents);
    const marks = instants(trace.traceEvents);
    expect(marks.map((m) => [m.name, names.get(m.tid)])).toEqual([
      ['adopt', 'rollout-0'],
      ['preempt', 'rollout-1'],
      ['interrupt', 'rollout-0'],
      ['stale-drop', 'rollout-0'],
    ]);
  });

  it('puts overlapping spans on extra named threads that sort under their lane', () => {
    const trace = toChromeTrace(overlapping);
    const names = threadNames(trace.traceEvents);
    const out = spans(trace.traceEvents);
    for (const s of out)
      expect([s.cat, `${s.cat} · slot 1`, `${s.cat} · slot 2`]).toContain(names.get(s.tid));
    // Three episodes overlap at once on rollout-0; the other lanes nest within one thread.
    const threadsOf = (lane: string) =>
      new Set(out.filter((s) => s.cat === lane).map((s) => names.get(s.tid)));
    expect(threadsOf('rollout-0')).toEqual(
      new Set(['rollout-0', 'rollout-0 · slot 1', 'rollout-0 · slot 2']),
    );
    expect(threadsOf('rollout-1')).toEqual(new Set(['rollout-1']));
    expect(threadsOf('trainer')).toEqual(new Set(['trainer']));
    const sortIndex = new Map<number, number>();
    for (const m of metadata(trace.traceEvents))
      if (m.name === 'thread_sort_index') sortIndex.set(m.tid, m.args.sort_index);
    expect(sortIndex.size).toBe(names.size);
    const bySort = [...sortIndex].sort((a, b) => a[1] - b[1]).map(([tid]) => names.get(tid));
    expect(bySort).toEqual([
      'trainer',
      'store',
      'rollout-0',
      'rollout-0 · slot 1',
      'rollout-0 · slot 2',
      'rollout-1',
    ]);
    // A generate segment that outlives its episode nests under the other slot's episode.
    const generate = out.find((s) => s.name === 'generate' && s.ts === 4000);
    const host = out.find((s) => s.name === 'episode' && s.ts === 3000);
    expect(generate?.tid).toBe(host?.tid);
  });
});

describe('traceFileName', () => {
  it('stamps the UTC time without characters file systems refuse', () => {
    const name = traceFileName(new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 678)));
    expect(name).toBe('sandbox-rl-lab-trace-2025-01-02T03-04-05Z.json');
    expect(name).not.toMatch(/[:\\/]/);
    expect(traceFileName(new Date(NaN))).toBe('sandbox-rl-lab-trace.json');
  });
});
