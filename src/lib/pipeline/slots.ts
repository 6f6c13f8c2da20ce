/**
 * Rollout slots as state (DESIGN §6, seed 000 §1.3): each slot of a rollout worker is idle,
 * running a job, blocked (free but held by the staleness bound η), or shows how its last job
 * ended (preempted, completed, failed) until the controller next settles it. Moves outside
 * `SLOT_MOVES` throw. Each slot keeps its own figures: jobs completed, preempted and failed,
 * mean episode return and busy time.
 */
import type { Lane } from './events';

/** A slot's state. */
export type SlotState = 'idle' | 'running' | 'blocked' | 'preempted' | 'completed' | 'failed';

/** Every state, in the order the dashboard lists them. */
export const SLOT_STATES: readonly SlotState[] = [
  'running',
  'blocked',
  'idle',
  'completed',
  'preempted',
  'failed',
];

/**
 * The legal moves: a job starts in a free slot (idle, blocked, or after its last job's end) and
 * ends completed, preempted or failed, or is withdrawn (running → idle) when the run stops; a
 * free slot is settled as blocked or idle.
 */
export const SLOT_MOVES: Readonly<Record<SlotState, readonly SlotState[]>> = {
  idle: ['running', 'blocked'],
  blocked: ['running', 'idle'],
  running: ['completed', 'preempted', 'failed', 'idle'],
  completed: ['running', 'blocked', 'idle'],
  preempted: ['running', 'blocked', 'idle'],
  failed: ['running', 'blocked', 'idle'],
};

/** Whether a slot in state `from` may move to `to`. */
export function canMove(from: SlotState, to: SlotState): boolean {
  return SLOT_MOVES[from].includes(to);
}

/** A slot asked to make a move `SLOT_MOVES` does not allow. */
export class IllegalSlotMove extends Error {
  constructor(
    readonly slot: string,
    readonly from: SlotState,
    readonly to: SlotState,
  ) {
    super(`slot ${slot} cannot go from ${from} to ${to}`);
    this.name = 'IllegalSlotMove';
  }
}

/** One slot as the dashboard reads it. */
export interface SlotView {
  /** `workerId/index`. */
  id: string;
  lane: Lane;
  state: SlotState;
  /** Epoch ms the slot entered its state. */
  since: number;
  /** The job it runs (running), or ran last; null before its first. */
  jobId: number | null;
  completed: number;
  preempted: number;
  failed: number;
  /** Mean return of the episodes of its completed jobs; null before one. */
  meanReward: number | null;
  /** Ms it has spent running jobs, the job in progress included. */
  busyMs: number;
}

/** A state left: the slot, what it was, and the stretch it lasted (for the timeline). */
export interface SlotStretch {
  slot: string;
  lane: Lane;
  state: SlotState;
  t0: number;
  t1: number;
}

/** One slot: its state and figures. */
export class Slot {
  state: SlotState = 'idle';
  jobId: number | null = null;
  completed = 0;
  preempted = 0;
  failed = 0;
  rewardSum = 0;
  episodes = 0;
  busyMs = 0;

  constructor(
    readonly id: string,
    readonly lane: Lane,
    public since: number,
  ) {}

  /** Moves to `to` at `t`; returns the stretch left. Throws `IllegalSlotMove` outside `SLOT_MOVES`. */
  move(to: SlotState, t: number): SlotStretch {
    if (!canMove(this.state, to)) throw new IllegalSlotMove(this.id, this.state, to);
    const left: SlotStretch = { slot: this.id, lane: this.lane, state: this.state, t0: this.since, t1: t };
    if (this.state === 'running') this.busyMs += Math.max(0, t - this.since);
    if (to === 'completed') this.completed += 1;
    else if (to === 'preempted') this.preempted += 1;
    else if (to === 'failed') this.failed += 1;
    this.state = to;
    this.since = t;
    return left;
  }

  view(t: number): SlotView {
    return {
      id: this.id,
      lane: this.lane,
      state: this.state,
      since: this.since,
      jobId: this.jobId,
      completed: this.completed,
      preempted: this.preempted,
      failed: this.failed,
      meanReward: this.episodes > 0 ? this.rewardSum / this.episodes : null,
      busyMs: this.busyMs + (this.state === 'running' ? Math.max(0, t - this.since) : 0),
    };
  }
}

/**
 * Every live worker's slots, and which job runs in which. The controller tells it when a job
 * starts and ends and settles the free slots after each round of admission (`settle`); the
 * stretches each call returns are the states left, which the controller draws on the timeline.
 */
export class SlotBoard {
  private readonly byWorker = new Map<string, Slot[]>();
  private readonly byJob = new Map<number, Slot>();

  /** Adds `count` idle slots of a worker. */
  addWorker(workerId: string, lane: Lane, count: number, t: number): void {
    if (this.byWorker.has(workerId)) throw new Error(`worker ${workerId} already has slots`);
    this.byWorker.set(
      workerId,
      Array.from({ length: count }, (_, i) => new Slot(`${workerId}/${i}`, lane, t)),
    );
  }

  /**
   * Removes a worker's slots: its running jobs fail (they are lost with it). Returns the
   * stretches they left, failures included.
   */
  removeWorker(workerId: string, t: number): SlotStretch[] {
    const slots = this.byWorker.get(workerId) ?? [];
    const out: SlotStretch[] = [];
    for (const s of slots) {
      if (s.state === 'running') out.push(this.end(s, 'failed', t));
      else out.push({ slot: s.id, lane: s.lane, state: s.state, t0: s.since, t1: t });
    }
    this.byWorker.delete(workerId);
    return out;
  }

  /** Puts `jobId` in a free slot of `workerId`; throws when it has none. */
  start(workerId: string, jobId: number, t: number): SlotStretch {
    const slot = (this.byWorker.get(workerId) ?? []).find((s) => s.state !== 'running');
    if (!slot) throw new Error(`worker ${workerId} has no free slot for job ${jobId}`);
    const left = slot.move('running', t);
    slot.jobId = jobId;
    this.byJob.set(jobId, slot);
    return left;
  }

  /**
   * Ends the job in its slot as `outcome`; a completed job's episode `returns` count towards the
   * slot's mean reward. Null when no slot runs the job (it was already ended).
   */
  finish(
    jobId: number,
    outcome: 'completed' | 'preempted' | 'failed',
    t: number,
    returns: readonly number[] = [],
  ): SlotStretch | null {
    const slot = this.byJob.get(jobId);
    if (!slot) return null;
    if (outcome === 'completed') {
      for (const r of returns) slot.rewardSum += r;
      slot.episodes += returns.length;
    }
    return this.end(slot, outcome, t);
  }

  private end(slot: Slot, outcome: 'completed' | 'preempted' | 'failed', t: number): SlotStretch {
    const left = slot.move(outcome, t);
    if (slot.jobId !== null) this.byJob.delete(slot.jobId);
    return left;
  }

  /**
   * Settles the free slots: `held` of them blocked (those already blocked first, so a stretch
   * is not split), the rest idle. Returns the stretches left (an unchanged slot leaves none).
   */
  settle(held: number, t: number): SlotStretch[] {
    const free = [...this.byWorker.values()].flat().filter((s) => s.state !== 'running');
    free.sort((a, b) => Number(b.state === 'blocked') - Number(a.state === 'blocked'));
    const out: SlotStretch[] = [];
    free.forEach((s, i) => {
      const to: SlotState = i < held ? 'blocked' : 'idle';
      if (s.state !== to) out.push(s.move(to, t));
    });
    return out;
  }

  /**
   * The run stopped: running jobs are withdrawn (their slots idle, counted in no outcome) and
   * every free slot is idle. Returns the stretches left.
   */
  stopAll(t: number): SlotStretch[] {
    const out: SlotStretch[] = [];
    for (const s of [...this.byWorker.values()].flat()) {
      if (s.state !== 'idle') out.push(s.move('idle', t));
    }
    this.byJob.clear();
    return out;
  }

  /** Every live slot, by id in natural order (rollout-2/1 before rollout-10/0). */
  views(t: number): SlotView[] {
    return [...this.byWorker.values()]
      .flat()
      .map((s) => s.view(t))
      .sort((a, b) => a.id.localeCompare(b.id, 'en', { numeric: true }));
  }

  /** Live slots per state (every state present, 0 when none). */
  counts(): Record<SlotState, number> {
    return slotCounts(this.views(0));
  }
}

/** Slots per state of `views` (every state present, 0 when none). */
export function slotCounts(views: readonly Pick<SlotView, 'state'>[]): Record<SlotState, number> {
  const out = Object.fromEntries(SLOT_STATES.map((s) => [s, 0])) as Record<SlotState, number>;
  for (const v of views) out[v.state] += 1;
  return out;
}

/** "3 running · 1 blocked · 2 idle": the states with any slot, in `SLOT_STATES` order. */
export function slotCountsLine(counts: Readonly<Record<SlotState, number>>): string {
  const parts = SLOT_STATES.filter((s) => counts[s] > 0).map((s) => `${counts[s]} ${s}`);
  return parts.length ? parts.join(' · ') : 'none';
}
