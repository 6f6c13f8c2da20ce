import { describe, expect, it } from 'vitest';
import { flush, setup } from './controller.fakes';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Pipeline slots', () => {
  it('η = 0: slots past the batch are blocked while it plays, all of them while the trainer trains', async () => {
    // 3 workers × 2 slots, B = 2: two run, four are held by the staleness bound.
    const { p, trainer, ws } = setup({ eta: 0 });
    expect(p.slotCounts).toMatchObject({ running: 2, blocked: 4, idle: 0 });
    expect(p.slots().map((s) => s.id)).toEqual(['w0/0', 'w0/1', 'w1/0', 'w1/1', 'w2/0', 'w2/1']);
    for (const w of ws) w.finishAll();
    await flush();
    expect(trainer.calls).toHaveLength(1);
    expect(p.slotCounts).toMatchObject({ running: 0, blocked: 6 });
    trainer.finish();
    await flush();
    expect(p.slotCounts).toMatchObject({ running: 2, blocked: 4 });
    const done = p.slots().filter((s) => s.completed > 0);
    expect(done).toHaveLength(2);
    // FakeWorker's groups: one of two episodes solved (return 1), the other 0.
    for (const s of done) expect(s.meanReward).toBeCloseTo(0.5);
  });

  it('draws a blocked stretch on the worker lane when the slot starts again', async () => {
    const { p, trainer, ws, events } = setup({ eta: 0 }, 1);
    // One worker, 2 slots, B = 2: both run; once done, both are blocked while the trainer trains.
    ws[0]?.finishAll();
    await flush();
    expect(p.slotCounts.blocked).toBe(2);
    await pause(5);
    trainer.finish();
    await flush();
    const blocked = events.filter((e) => e.kind === 'blocked');
    expect(blocked).toHaveLength(2);
    for (const e of blocked) {
      expect(e.lane).toBe('rollout-0');
      expect(e.t1 - e.t0).toBeGreaterThanOrEqual(1);
      expect(String(e.meta?.['held by'])).toContain('η = 0');
    }
    expect(blocked.map((e) => e.meta?.slot).sort()).toEqual(['w0/0', 'w0/1']);
    expect(p.slotCounts.running).toBe(2);
  });

  it('counts a preemption on the victim slot and a failure on the slot whose job threw', async () => {
    const { p, ws } = setup({ eta: 4, preemptAfterMs: 0, maxJobFailures: 3 }, 2);
    const victimSlots = p.slots().filter((s) => s.id.startsWith('w1/'));
    expect(victimSlots.every((s) => s.state === 'running')).toBe(true);
    p.removeWorker('w0', 'test');
    p.tick();
    const w1 = p.slots();
    expect(w1.map((s) => s.id)).toEqual(['w1/0', 'w1/1']); // w0's slots are gone with it
    expect(w1.reduce((n, s) => n + s.preempted, 0)).toBe(p.counters.preemptions);
    expect(p.counters.preemptions).toBeGreaterThanOrEqual(1);
    // A job that throws: its slot counts a failure, and the job is requeued into a slot again.
    const job = [...(ws[1]?.jobs.values() ?? [])][0];
    if (!job) throw new Error('no job on w1');
    ws[1]?.jobs.delete(job.job.jobId);
    const before = p.slots().reduce((n, s) => n + s.failed, 0);
    job.resolve(Promise.reject(new Error('boom')) as never);
    await flush();
    expect(p.slots().reduce((n, s) => n + s.failed, 0)).toBe(before + 1);
  });

  it('Stop withdraws running jobs: every slot idle, no outcome counted', () => {
    const { p } = setup({ eta: 4 }, 2);
    expect(p.slotCounts.running).toBe(4);
    p.stop();
    expect(p.slotCounts).toMatchObject({ idle: 4, running: 0 });
    expect(p.slots().every((s) => s.completed + s.preempted + s.failed === 0)).toBe(true);
  });
});
