import { describe, expect, it } from 'vitest';
import type { Lane, TimelineEvent } from './events';
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

describe('traceFileName', () => {
  it('stamps the UTC time without characters file systems refuse', () => {
    const name = traceFileName(new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 678)));
    expect(name).toBe('sandbox-rl-lab-trace-2025-01-02T03-04-05Z.json');
    expect(name).not.toMatch(/[:\\/]/);
    expect(traceFileName(new Date(NaN))).toBe('sandbox-rl-lab-trace.json');
  });
});
