import type { MlpCheckpoint } from '../policy/mlp';
import type { Checkpoint } from '../policy/weights';
import { now, type TimelineEvent } from './events';

/** Name of the BroadcastChannel on which the trainer announces each published version. */
export const PARAMS_CHANNEL = 'sandbox-rl-lab/params';

/**
 * One announce: the version is already durable in IndexedDB when it is sent; the weights ride
 * along (no optimiser state) so workers adopt without a store read. A code run announces the
 * transformer's weights, a custom-environment training its MLP's.
 */
export interface VersionAnnounce<C extends Checkpoint | MlpCheckpoint = Checkpoint | MlpCheckpoint> {
  runId: string;
  version: number;
  /** Epoch ms of the announce (adoption latency is measured from it). */
  publishedAt: number;
  checkpoint: C;
}

/** The announce carries a custom environment's MLP. */
export function isMlpAnnounce(a: VersionAnnounce): a is VersionAnnounce<MlpCheckpoint> {
  return a.checkpoint.format === 'sandbox-rl-lab/mlp@1';
}

/** The announce carries the code-writing policy's weights. */
export function isCodeAnnounce(a: VersionAnnounce): a is VersionAnnounce<Checkpoint> {
  return !isMlpAnnounce(a);
}

export function isVersionAnnounce(data: unknown): data is VersionAnnounce {
  if (typeof data !== 'object' || data === null) return false;
  const d = data as Record<string, unknown>;
  return (
    typeof d.runId === 'string' &&
    typeof d.version === 'number' &&
    typeof d.checkpoint === 'object' &&
    d.checkpoint !== null
  );
}

/** Events an `EventBatcher` keeps while it has no sink. */
const MAX_UNSENT = 5000;

/**
 * Collects a worker's timeline events and hands them to the page in batches (one message per
 * `intervalMs` instead of one per event).
 */
export class EventBatcher {
  private queue: TimelineEvent[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  sink: ((events: TimelineEvent[]) => void) | undefined;

  constructor(private readonly intervalMs = 100) {}

  push(event: TimelineEvent): void {
    this.queue.push(event);
    // Without a sink yet (or ever), only the newest events are kept.
    if (!this.sink && this.queue.length > MAX_UNSENT) this.queue.splice(0, this.queue.length - MAX_UNSENT);
    this.timer ??= setTimeout(() => this.flush(), this.intervalMs);
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.queue.length === 0 || !this.sink) return;
    const out = this.queue;
    this.queue = [];
    this.sink(out);
  }

  /** An instant event stamped now. */
  mark(e: Omit<TimelineEvent, 't0' | 't1'>): void {
    const t = now();
    this.push({ ...e, t0: t, t1: t });
  }
}
