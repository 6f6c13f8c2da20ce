import { describe, expect, it } from 'vitest';
import {
  IllegalSlotMove,
  Slot,
  SLOT_MOVES,
  SLOT_STATES,
  SlotBoard,
  canMove,
  slotCounts,
  slotCountsLine,
} from './slots';

describe('slot moves', () => {
  it('allows a job to start only in a free slot and to end only from running', () => {
    expect(canMove('idle', 'running')).toBe(true);
    expect(canMove('blocked', 'running')).toBe(true);
    expect(canMove('completed', 'running')).toBe(true);
    expect(canMove('running', 'running')).toBe(false);
    expect(canMove('idle', 'completed')).toBe(false);
    expect(canMove('blocked', 'preempted')).toBe(false);
    expect(canMove('running', 'idle')).toBe(true); // withdrawn when the run stops
    expect(canMove('idle', 'idle')).toBe(false);
    expect(canMove('running', 'blocked')).toBe(false);
    // No state is a dead end: every one can reach running.
    for (const s of SLOT_STATES) expect(s === 'running' || canMove(s, 'running')).toBe(true);
    expect(Object.keys(SLOT_MOVES).sort()).toEqual([...SLOT_STATES].sort());
  });
});

describe('SlotBoard', () => {
  it('runs a job in a free slot, ends it, and keeps the slot figures', () => {
    const b = new SlotBoard();
    b.addWorker('w0', 'rollout-0', 2, 0);
    b.start('w0', 7, 10);
    b.start('w0', 8, 10);
    expect(() => b.start('w0', 9, 10)).toThrow(/no free slot/);
    expect(b.finish(7, 'completed', 110, [1, 0, 0.5, 0.5])?.state).toBe('running');
    expect(b.finish(8, 'preempted', 40)).toMatchObject({ state: 'running', t0: 10, t1: 40 });
    expect(b.finish(8, 'failed', 50)).toBeNull(); // already ended
    const [a, c] = b.views(200);
    expect(a).toMatchObject({ id: 'w0/0', state: 'completed', completed: 1, jobId: 7, busyMs: 100 });
    expect(a?.meanReward).toBeCloseTo(0.5);
    expect(c).toMatchObject({ id: 'w0/1', state: 'preempted', preempted: 1, meanReward: null, busyMs: 30 });
    // The job in progress counts towards busy time.
    b.start('w0', 9, 200);
    expect(b.views(260)[0]).toMatchObject({ state: 'running', busyMs: 160, jobId: 9 });
  });

  it('settles free slots as blocked (held by η) or idle, keeping a blocked stretch whole', () => {
    const b = new SlotBoard();
    b.addWorker('w0', 'rollout-0', 2, 0);
    b.addWorker('w1', 'rollout-1', 2, 0);
    b.start('w0', 1, 0);
    expect(b.settle(1, 5).map((s) => s.slot)).toEqual(['w0/1']); // idle → blocked
    expect(b.counts()).toMatchObject({ running: 1, blocked: 1, idle: 2 });
    // Still one held: the same slot stays blocked, nothing left.
    expect(b.settle(1, 9)).toEqual([]);
    const left = b.settle(0, 20);
    expect(left).toEqual([{ slot: 'w0/1', lane: 'rollout-0', state: 'blocked', t0: 5, t1: 20 }]);
    expect(b.counts()).toMatchObject({ running: 1, blocked: 0, idle: 3 });
    expect(slotCountsLine(b.counts())).toBe('1 running · 3 idle');
  });

  it('refuses an illegal move with IllegalSlotMove, leaving the slot as it was', () => {
    const s = new Slot('w/0', 'rollout-0', 0);
    expect(() => s.move('completed', 1)).toThrow(IllegalSlotMove);
    expect(() => s.move('completed', 1)).toThrow('slot w/0 cannot go from idle to completed');
    expect(s.view(1)).toMatchObject({ state: 'idle', completed: 0 });
    s.move('running', 2);
    expect(() => s.move('blocked', 3)).toThrow(IllegalSlotMove);
    expect(() => s.move('running', 3)).toThrow(IllegalSlotMove);
    s.move('completed', 5);
    expect(s.view(9)).toMatchObject({ state: 'completed', completed: 1, busyMs: 3, since: 5 });
  });

  it('stopAll withdraws running jobs without counting an outcome and closes blocked stretches', () => {
    const b = new SlotBoard();
    b.addWorker('w0', 'rollout-0', 3, 0);
    b.start('w0', 1, 0);
    b.settle(2, 4);
    const left = b.stopAll(10);
    expect(left.map((s) => [s.state, s.t0, s.t1])).toEqual([
      ['running', 0, 10],
      ['blocked', 4, 10],
      ['blocked', 4, 10],
    ]);
    expect(b.counts()).toMatchObject({ idle: 3, running: 0 });
    expect(b.views(20)[0]).toMatchObject({ completed: 0, preempted: 0, failed: 0, busyMs: 10 });
    expect(b.finish(1, 'completed', 11)).toBeNull();
  });

  it('lists slots by id in natural order, whatever order the workers joined in', () => {
    const b = new SlotBoard();
    b.addWorker('rollout-10', 'rollout-10', 1, 0);
    b.addWorker('rollout-2', 'rollout-2', 2, 0);
    expect(b.views(0).map((v) => v.id)).toEqual(['rollout-2/0', 'rollout-2/1', 'rollout-10/0']);
  });

  it("a removed worker's running jobs fail and its slots are gone", () => {
    const b = new SlotBoard();
    b.addWorker('w0', 'rollout-0', 2, 0);
    b.start('w0', 1, 0);
    b.settle(1, 0);
    const left = b.removeWorker('w0', 10);
    expect(left.map((s) => [s.slot, s.state])).toEqual([
      ['w0/0', 'running'],
      ['w0/1', 'blocked'],
    ]);
    expect(b.views(10)).toEqual([]);
    expect(b.finish(1, 'completed', 11)).toBeNull();
    expect(slotCounts([{ state: 'idle' }, { state: 'idle' }, { state: 'failed' }])).toMatchObject({
      idle: 2,
      failed: 1,
      running: 0,
    });
    expect(slotCountsLine(slotCounts([]))).toBe('none');
  });
});
