/**
 * Timeline events → Chrome trace-event JSON (the "JSON Object Format"), which Perfetto
 * (ui.perfetto.dev) and chrome://tracing open. One process, one thread per lane.
 */
import type { Lane, TimelineEvent } from './events';
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

/** Microseconds, rounded to the nanosecond (keeps the JSON short and exact). */
function micros(ms: number): number {
  return Math.round(ms * 1e6) / 1e3;
}

/**
 * Thread id of each lane: 1, 2, … in display order (controller, trainer, store,
 * rollout-0..N, sandbox), so that the same lane always gets the same id within a trace.
 */
export function laneTids(events: readonly TimelineEvent[]): Map<Lane, number> {
  const lanes = [...new Set(events.map((e) => e.lane))].sort(compareLanes);
  return new Map(lanes.map((lane, i) => [lane, i + 1]));
}

/**
 * Converts timeline events (epoch ms) to a Chrome trace. Spans (t1 > t0) become complete
 * events (`ph: 'X'`), the rest instants (`ph: 'i'`); `ts` counts microseconds from the
 * earliest event; `name` is the kind, `cat` the lane, `args` the meta plus the version.
 * Events with a non-finite time are left out. Metadata names the process and each lane's
 * thread and sorts the threads in display order.
 */
export function toChromeTrace(events: readonly TimelineEvent[], opts: ChromeTraceOptions = {}): ChromeTrace {
  const title = opts.title ?? 'Sandbox RL Lab';
  const valid = events.filter((e) => Number.isFinite(e.t0) && Number.isFinite(e.t1));
  const tids = laneTids(valid);
  const traceEvents: TraceEvent[] = [
    { ph: 'M', name: 'process_name', pid: TRACE_PID, tid: 0, args: { name: title } },
  ];
  for (const [lane, tid] of tids) {
    traceEvents.push(
      { ph: 'M', name: 'thread_name', pid: TRACE_PID, tid, args: { name: lane } },
      { ph: 'M', name: 'thread_sort_index', pid: TRACE_PID, tid, args: { sort_index: tid } },
    );
  }
  if (valid.length === 0) return { traceEvents, displayTimeUnit: 'ms', otherData: { title, events: 0 } };

  let origin = Infinity;
  for (const e of valid) origin = Math.min(origin, e.t0);
  const ordered = [...valid].sort((a, b) => a.t0 - b.t0);
  for (const e of ordered) {
    const tid = tids.get(e.lane) ?? 0;
    // The event's own version wins over a meta field of the same name.
    const args: TraceArgs = { ...e.meta, version: e.version };
    const ts = micros(e.t0 - origin);
    if (e.t1 > e.t0) {
      traceEvents.push({
        ph: 'X',
        name: e.kind,
        cat: e.lane,
        pid: TRACE_PID,
        tid,
        ts,
        dur: micros(e.t1 - e.t0),
        args,
      });
    } else {
      traceEvents.push({ ph: 'i', s: 't', name: e.kind, cat: e.lane, pid: TRACE_PID, tid, ts, args });
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
