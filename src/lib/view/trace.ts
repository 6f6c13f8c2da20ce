/**
 * Timeline events → Chrome trace-event JSON (the "JSON Object Format"), which Perfetto
 * (ui.perfetto.dev) and chrome://tracing open. One process, one thread per lane, plus
 * "slot" threads under a lane whose spans overlap without nesting (see `toChromeTrace`).
 */
import type { Lane, TimelineEvent } from '../pipeline/events';
import { compareLanes } from './timeline-view';

/** An event's "args" as the trace viewer shows them. */
export type TraceArgs = Record<string, string | number | boolean>;

/** Fields every trace event has. */
interface TraceEventBase {
  name: string;
  pid: number;
  tid: number;
}

/** A span: `ts` and `dur` in microseconds. */
export interface TraceCompleteEvent extends TraceEventBase {
  ph: 'X';
  cat: string;
  ts: number;
  dur: number;
  args: TraceArgs;
}

/** An instant, scoped to its thread (`s: 't'`). */
export interface TraceInstantEvent extends TraceEventBase {
  ph: 'i';
  s: 't';
  cat: string;
  ts: number;
  args: TraceArgs;
}

/** Names a process or a thread. */
export interface TraceNameMetadata extends TraceEventBase {
  ph: 'M';
  name: 'process_name' | 'thread_name';
  args: { name: string };
}

/** Orders processes or threads in the viewer (lower first). */
export interface TraceSortMetadata extends TraceEventBase {
  ph: 'M';
  name: 'process_sort_index' | 'thread_sort_index';
  args: { sort_index: number };
}

/** A metadata event. */
export type TraceMetadataEvent = TraceNameMetadata | TraceSortMetadata;

/** Any event of the trace. */
export type TraceEvent = TraceCompleteEvent | TraceInstantEvent | TraceMetadataEvent;

/** The whole file. */
export interface ChromeTrace {
  traceEvents: TraceEvent[];
  displayTimeUnit: 'ms';
  /** Shown by the viewer as the trace's metadata. */
  otherData?: Record<string, string | number>;
}

/** Options of `toChromeTrace`. */
export interface ChromeTraceOptions {
  /** The process name shown in the viewer (default "Sandbox RL Lab"). */
  title?: string;
}

/** The one process of the trace. */
export const TRACE_PID = 1;

/** Integer nanoseconds of a duration in milliseconds. */
function nanos(ms: number): number {
  return Math.round(ms * 1e6);
}

/** Name of the `slot`-th extra thread of a lane (slot ≥ 1). */
export function slotThreadName(lane: Lane, slot: number): string {
  return `${lane} · slot ${slot}`;
}

/**
 * Thread id of each lane: 1, 2, … in display order (controller, trainer, store,
 * rollout-0..N, sandbox), so that the same lane always gets the same id within a trace.
 */
export function laneTids(events: readonly TimelineEvent[]): Map<Lane, number> {
  const lanes = [...new Set(events.map((e) => e.lane))].sort(compareLanes);
  return new Map(lanes.map((lane, i) => [lane, i + 1]));
}

/** An event placed on the trace: start and end in integer nanoseconds from the origin. */
interface Placed {
  event: TimelineEvent;
  start: number;
  end: number;
  /** 0: the lane's own thread; k ≥ 1: its k-th slot thread. */
  slot: number;
}

/**
 * Puts each span of one lane on a slot so that the spans of every slot nest perfectly
 * (any two are disjoint or one contains the other), as a trace viewer requires of the
 * complete events of one thread. Greedy, in order of start (the longer first on a tie):
 * a span goes to the lowest slot where it fits inside the innermost span still open
 * there, or where nothing is open. Nested spans thus stay on the lane's own thread; a
 * slot opens only where spans overlap partially (two jobs' episodes on a worker with
 * several slots, a decode segment that closes after its episode). Returns the number
 * of slots used.
 */
function assignSlots(spans: readonly Placed[]): number {
  // Per slot, the ends of its open spans, innermost last (non-increasing).
  const open: number[][] = [];
  for (const span of spans) {
    let slot = 0;
    for (; slot < open.length; slot++) {
      const stack = open[slot] ?? [];
      // Spans that ended by this start are closed; it fits inside the innermost open one.
      while ((stack.at(-1) ?? Infinity) <= span.start) stack.pop();
      if ((stack.at(-1) ?? Infinity) >= span.end) break;
    }
    if (slot === open.length) open.push([]);
    open[slot]?.push(span.end);
    span.slot = slot;
  }
  return open.length;
}

/**
 * Converts timeline events (epoch ms) to a Chrome trace. Spans (t1 > t0, to the nanosecond) become complete
 * events (`ph: 'X'`), the rest instants (`ph: 'i'`); `ts` counts microseconds (to the
 * nanosecond) from the earliest event; `name` is the kind, `cat` the lane, `args` the
 * meta plus the version; a span's sandbox calls (`calls`) become instants named "sandbox call"
 * on its thread. Events with a non-finite time are left out.
 *
 * Each lane is a thread, and its instants (adopt, interrupt, stale drop, preempt…) stay
 * on it. The spans of a rollout lane can overlap without nesting (several jobs' episodes
 * at once, decode segments across them), which trace viewers do not draw on one thread:
 * such spans go to extra threads named "<lane> · slot <k>" (see `assignSlots`), so that
 * the complete events of every thread nest perfectly. Metadata names the process and
 * every thread and sorts the threads in display order, each lane's slots right under it.
 */
export function toChromeTrace(events: readonly TimelineEvent[], opts: ChromeTraceOptions = {}): ChromeTrace {
  const title = opts.title ?? 'Sandbox RL Lab';
  const valid = events.filter((e) => Number.isFinite(e.t0) && Number.isFinite(e.t1));
  const tids = laneTids(valid);
  let origin = Infinity;
  for (const e of valid) origin = Math.min(origin, e.t0);

  // In order of start, the longer first (a parent before its children), else as given.
  const placed: Placed[] = valid
    .map((event) => ({ event, start: nanos(event.t0 - origin), end: nanos(event.t1 - origin), slot: 0 }))
    .sort((a, b) => a.start - b.start || b.end - a.end);
  const slotCount = new Map<Lane, number>();
  for (const lane of tids.keys()) {
    // Spans only: an instant (or a span shorter than half a nanosecond) stays on the lane's thread.
    const spans = placed.filter((p) => p.event.lane === lane && p.end > p.start);
    slotCount.set(lane, assignSlots(spans));
  }

  // Lanes keep tids 1..N in display order; slot threads follow, numbered in the same order.
  const slotTids = new Map<Lane, number[]>();
  let nextTid = tids.size + 1;
  for (const lane of tids.keys()) {
    const extra: number[] = [];
    for (let k = 1; k < (slotCount.get(lane) ?? 1); k++) extra.push(nextTid++);
    slotTids.set(lane, extra);
  }
  const traceEvents: TraceEvent[] = [
    { ph: 'M', name: 'process_name', pid: TRACE_PID, tid: 0, args: { name: title } },
  ];
  let sortIndex = 0;
  const nameThread = (tid: number, name: string) => {
    sortIndex += 1;
    traceEvents.push(
      { ph: 'M', name: 'thread_name', pid: TRACE_PID, tid, args: { name } },
      { ph: 'M', name: 'thread_sort_index', pid: TRACE_PID, tid, args: { sort_index: sortIndex } },
    );
  };
  for (const [lane, tid] of tids) {
    nameThread(tid, lane);
    for (const [i, slotTid] of (slotTids.get(lane) ?? []).entries()) {
      nameThread(slotTid, slotThreadName(lane, i + 1));
    }
  }
  if (valid.length === 0) return { traceEvents, displayTimeUnit: 'ms', otherData: { title, events: 0 } };

  for (const { event: e, start, end, slot } of placed) {
    const laneTid = tids.get(e.lane) ?? 0;
    // The event's own version wins over a meta field of the same name.
    const args: TraceArgs = { ...e.meta, version: e.version };
    const ts = start / 1e3;
    if (end > start) {
      const tid = slot === 0 ? laneTid : (slotTids.get(e.lane)?.[slot - 1] ?? laneTid);
      traceEvents.push({
        ph: 'X',
        name: e.kind,
        cat: e.lane,
        pid: TRACE_PID,
        tid,
        ts,
        dur: (end - start) / 1e3,
        args,
      });
      // The span's sandbox calls (`calls`, ms after t0): instants on its thread.
      for (const [i, at] of (e.calls ?? []).entries()) {
        const callArgs: TraceArgs = { call: i + 1, of: e.calls?.length ?? 0, version: e.version };
        traceEvents.push({
          ph: 'i',
          s: 't',
          name: 'sandbox call',
          cat: e.lane,
          pid: TRACE_PID,
          tid,
          ts: ts + at * 1e3,
          args: callArgs,
        });
      }
    } else {
      traceEvents.push({
        ph: 'i',
        s: 't',
        name: e.kind,
        cat: e.lane,
        pid: TRACE_PID,
        tid: laneTid,
        ts,
        args,
      });
    }
  }
  // Wall-clock time of ts = 0 (left out when the times are not epoch milliseconds).
  const originDate = new Date(origin);
  const otherData: Record<string, string | number> = { title, events: valid.length, originEpochMs: origin };
  if (!Number.isNaN(originDate.getTime())) otherData.origin = originDate.toISOString();
  return { traceEvents, displayTimeUnit: 'ms', otherData };
}

/** File name for a trace exported at `date` (UTC), e.g. `sandbox-rl-lab-trace-2025-01-02T03-04-05Z.json`. */
export function traceFileName(date: Date): string {
  if (Number.isNaN(date.getTime())) return 'sandbox-rl-lab-trace.json';
  const stamp = date.toISOString().slice(0, 19).replace(/:/g, '-');
  return `sandbox-rl-lab-trace-${stamp}Z.json`;
}
