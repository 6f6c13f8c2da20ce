import { describe, expect, it, vi } from 'vitest';
import { Pipeline } from './controller';
import {
  FakeSource,
  FakeTrainer,
  FakeWorker,
  METRICS,
  configOf,
  flush,
  setup,
  trajectory,
} from './controller.fakes';
import type { RolloutPort } from './types';

describe('Pipeline', () => {
  it('a pipeline stopped before it starts stays stopped: no job, no timer', () => {
    // A Stop during a run's start-up reached the pipeline first; its later start set a timer no
    // one cleared and handed out jobs.
    const p = new Pipeline(configOf(), new FakeSource(), new FakeTrainer(), 'run', {
      emit: () => undefined,
      onError: () => undefined,
      onStep: () => undefined,
    });
    const w = new FakeWorker();
    p.addWorker('w0', w, 'rollout-0');
    p.stop();
    const intervals = vi.spyOn(globalThis, 'setInterval');
    p.start(100);
    expect(intervals).not.toHaveBeenCalled();
    expect(w.jobs.size).toBe(0);
    intervals.mockRestore();
  });

  it('η = 0 is synchronous: one batch per version, no rollout while the trainer computes', async () => {
    const { p, trainer, ws, running, steps } = setup({ eta: 0 });
    expect(running()).toBe(2); // B groups, not every free slot
    for (const w of ws) w.finishAll();
    await flush();
    expect(trainer.calls).toHaveLength(1);
    expect(running()).toBe(0); // nothing admitted while training
    expect(trainer.calls[0]?.fromVersion).toBe(0);
    // The update strategy's performance: one of each group's two episodes solved.
    expect(trainer.calls[0]?.performance).toBe(0.5);
    // The step in flight (what its version's saved progress counts as trained): 2 groups of 2.
    expect(p.inFlight).toEqual({ episodes: 4 });
    expect(p.counters.trainedEpisodes).toBe(0);
    trainer.finish();
    await flush();
    expect(p.inFlight).toBeNull();
    expect(p.counters.trainedEpisodes).toBe(4);
    expect(steps).toEqual([1]);
    expect(p.version).toBe(1);
    expect(running()).toBe(2);
    for (const w of ws) for (const { job } of w.jobs.values()) expect(job.minVersion).toBe(1);
  });

  it('η = 2 keeps rolling out while the trainer computes, up to (η + v + 1)·B groups ahead', async () => {
    const { p, trainer, ws, running } = setup({ eta: 2 });
    expect(running()).toBe(6); // min(6 slots, 3·2)
    ws[0]?.finishAll();
    await flush();
    expect(trainer.calls).toHaveLength(1);
    // accepted 2 + running 4 = 6 = (2 + 0 + 1)·2: no more until a version is published.
    expect(running()).toBe(4);
    trainer.finish();
    await flush();
    expect(p.version).toBe(1);
    expect(running()).toBe(6); // capacity (2 + 1 + 1)·2 − 8 = 0, slots allow 2: both start
  });

  it('drops a group whose oldest token is more than η versions old, and counts it', async () => {
    const { p, trainer, ws } = setup({ eta: 1 }, 1);
    // One worker, 2 slots, B = 2: jobs 0 and 1 at version 0.
    const slow = [...(ws[0]?.jobs.keys() ?? [])][0] as number;
    // Every other job finishes at once and the trainer keeps up, until version 2.
    while (p.version < 2) {
      for (const k of [...(ws[0]?.jobs.keys() ?? [])]) if (k !== slow) ws[0]?.finish(k, p.version);
      await flush();
      if (trainer.calls.length) trainer.finish();
      await flush();
    }
    expect(p.counters.staleDrops).toBe(0);
    // The slow job, admitted at version 0, finishes now: 2 − 0 > η = 1.
    const base = ws[0]?.jobs.get(slow)?.job.seqBase ?? NaN;
    ws[0]?.finish(slow as number);
    await flush();
    expect(p.counters.staleDrops).toBe(1);
    expect(p.counters.staleDroppedEpisodes).toBe(2);
    // Its samples are marked consumed with the next version (a resumed run does not revive them).
    while (!trainer.calls.length) {
      for (const k of [...(ws[0]?.jobs.keys() ?? [])]) ws[0]?.finish(k, p.version);
      await flush();
    }
    expect(trainer.calls[0]?.seqs).toEqual(expect.arrayContaining([base, base + 1]));
    trainer.finish();
    await flush();
    expect(trainer.calls.flatMap((c) => c.seqs)).not.toContain(base);
  });

  it('with a fixed lag, keeps groups played up to η + lag versions back and reports their staleness', async () => {
    const { p, trainer, ws, steps, reports } = setup({ eta: 0, playLag: 2 });
    // Synchronous; the workers play the weights 2 versions back (their tokens say so).
    while (p.version < 4) {
      for (const w of ws) for (const k of [...w.jobs.keys()]) w.finish(k, Math.max(0, p.version - 2));
      await flush();
      trainer.finish();
      await flush();
    }
    expect(p.counters.staleDrops).toBe(0);
    expect(steps).toEqual([1, 2, 3, 4]);
    expect(reports.map((r) => r.staleness)).toEqual([
      [0, 0],
      [1, 1],
      [2, 2],
      [2, 2],
    ]);
    // Older than η + lag: dropped as stale.
    for (const w of ws) for (const k of [...w.jobs.keys()]) w.finish(k, p.version - 3);
    await flush();
    expect(p.counters.staleDrops).toBe(2);
    expect(p.ledger.staleDropped.size).toBe(p.counters.staleDroppedEpisodes);
  });

  it('requeues the jobs of a worker that died at the highest class, and they start first', async () => {
    const { p, ws, events } = setup({ eta: 4, preemptAfterMs: 60_000 }, 2);
    const lost = [...(ws[0]?.jobs.values() ?? [])].map((j) => j.job.task.id);
    const lostSeqs = [...(ws[0]?.jobs.values() ?? [])].map((j) => [j.job.jobId, j.job.seqBase]);
    expect(lost).toHaveLength(2);
    p.removeWorker('w0', 'test');
    expect(p.counters.requeues).toBe(2);
    expect(events.filter((e) => e.kind === 'requeue')).toHaveLength(2);
    const fresh = new FakeWorker();
    p.addWorker('w0b', fresh, 'rollout-0');
    const started = [...fresh.jobs.values()].map((j) => j.job);
    expect(started.map((j) => j.task.id).sort()).toEqual([...lost].sort());
    expect(started.every((j) => j.cls === 'high')).toBe(true);
    // A relaunch stores its group under its first launch's seqs, over what the dead worker may
    // have stored before it could answer: one job, one stored group.
    expect(started.map((j) => [j.jobId, j.seqBase]).sort()).toEqual([...lostSeqs].sort());
    const newJobs = [...(ws[1]?.jobs.values() ?? [])].map((j) => j.job.seqBase);
    for (const [, base] of lostSeqs) expect(newJobs).not.toContain(base);
  });

  it('preempts the lowest-value running job when a higher-class job waits past the bound', async () => {
    const { p, ws, events } = setup({ eta: 4, preemptAfterMs: 0 }, 2);
    // w0's two jobs are requeued; w1's slots are full, so one of its jobs is preempted for them.
    const victims = [...(ws[1]?.jobs.values() ?? [])].map((j) => j.job);
    const lowest = victims.reduce((a, b) => (a.value <= b.value ? a : b));
    p.removeWorker('w0', 'test');
    p.tick();
    expect(p.counters.preemptions).toBeGreaterThanOrEqual(1);
    expect(ws[1]?.aborted[0]).toBe(lowest.jobId);
    expect(events.some((e) => e.kind === 'preempt' && e.lane === 'rollout-1')).toBe(true);
    expect([...(ws[1]?.jobs.values() ?? [])].some((j) => j.job.cls === 'high')).toBe(true);
  });

  it('a batch the trainer lost is trained again after it restarts', async () => {
    const { p, trainer, ws } = setup({ eta: 0 });
    for (const w of ws) w.finishAll();
    await flush();
    const seqs = trainer.calls[0]?.seqs ?? [];
    expect(seqs).toHaveLength(4);
    p.trainerLost();
    const again = new FakeTrainer();
    p.trainerRestored(again, 0);
    expect(again.calls[0]?.seqs).toEqual(seqs);
    // A late answer from the dead trainer is ignored.
    trainer.finish();
    await flush();
    expect(p.version).toBe(0);
    again.finish();
    await flush();
    expect(p.version).toBe(1);
  });

  it('a batch published just before the trainer died is not trained again, and is reported', async () => {
    const { p, trainer, ws, steps, reports } = setup({ eta: 0 });
    for (const w of ws) w.finishAll();
    await flush();
    expect(trainer.calls).toHaveLength(1);
    p.trainerLost();
    const again = new FakeTrainer();
    const stored = { ...METRICS, loss: 0.25, ms: 40 };
    p.trainerRestored(again, 1, stored); // the store already holds version 1, and its metrics
    expect(p.version).toBe(1);
    expect(p.buffer.size).toBe(0);
    expect(again.calls).toHaveLength(0);
    // It is counted as trained: one step, its 2 groups of 2 episodes, both 0 versions stale.
    expect(p.counters.trainSteps).toBe(1);
    expect(p.counters.trainedEpisodes).toBe(4);
    expect(p.counters.stalenessHistogram[0]).toBe(2);
    // And reported as the step it was, with the stored metrics: the charts have its point.
    expect(steps).toEqual([1]);
    expect(reports.at(-1)).toMatchObject({ version: 1, episodes: 4, loss: 0.25, staleness: [0, 0] });
  });

  it('a job that keeps failing stops the run with its message', async () => {
    const { errors, p } = setup({ eta: 0, maxJobFailures: 0 }, 1);
    const failing: RolloutPort = {
      play: () => Promise.reject(new Error('sandbox exploded')),
      abort: async () => undefined,
    };
    p.removeWorker('w0', 'swap');
    p.addWorker('bad', failing, 'rollout-0');
    await flush();
    expect(errors[0]).toMatch(/sandbox exploded/);
    expect(p.isStopped).toBe(true);
  });

  it("η = 0 trains and records a version's groups in job-id order, whichever finished first", async () => {
    const { p, trainer, ws, source } = setup({ eta: 0, batchGroups: 4, slotsPerWorker: 2 }, 1);
    const recorded = source.recordedJobs;
    const w = ws[0] as FakeWorker;
    w.finish(1); // job 1 before job 0: job 2 takes its slot
    await flush();
    expect(recorded).toEqual([]); // held until the version's last group is in
    expect([...w.jobs.keys()]).toEqual([0, 2]);
    w.finish(2);
    await flush();
    w.finish(3);
    await flush();
    expect(trainer.calls).toHaveLength(0);
    w.finish(0);
    await flush();
    expect(recorded).toEqual([0, 1, 2, 3]);
    // Job j has seqs 2j, 2j + 1: the batch is in job order.
    expect(trainer.calls[0]?.seqs).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    trainer.finish();
    await flush();
    expect(p.version).toBe(1);
    expect([...w.jobs.keys()]).toEqual([4, 5]);
  });

  it('η > 0 keeps the order in which groups finish', async () => {
    const { trainer, ws, source } = setup({ eta: 1, batchGroups: 2, slotsPerWorker: 2 }, 1);
    const recorded = source.recordedJobs;
    const w = ws[0] as FakeWorker;
    w.finish(1);
    await flush();
    expect(recorded).toEqual([1]); // recorded as it arrives
    w.finish(0);
    await flush();
    expect(trainer.calls[0]?.seqs).toEqual([2, 3, 0, 1]);
  });
  it('hands each finished group to onPlayed with its job and lane, but not one of a job it took back', async () => {
    const played: [number, string, number][] = [];
    const p = new Pipeline(configOf({ eta: 1 }), new FakeSource(), new FakeTrainer(), 'run', {
      onPlayed: (job, group, lane) => played.push([job.jobId, lane, group.trajectories.length]),
    });
    const [w0, w1] = [new FakeWorker(), new FakeWorker()];
    p.addWorker('w0', w0, 'rollout-0');
    p.addWorker('w1', w1, 'rollout-1');
    p.start(0);
    const [first] = [...w1.jobs.keys()];
    w1.finish(first ?? -1);
    await flush();
    expect(played).toEqual([[first, 'rollout-1', 2]]);
    // A worker that died: its job is requeued, and a late answer of it is not the group played.
    const [lost] = [...w0.jobs.values()];
    p.removeWorker('w0', 'crash');
    lost?.resolve({
      jobId: lost.job.jobId,
      status: 'done',
      trajectories: [trajectory(0, true)],
      relabelled: [],
      seqs: [lost.job.seqBase],
      oldestVersion: 0,
      newestVersion: 0,
      interrupted: 0,
      startedAt: 0,
      endedAt: 0,
    });
    await flush();
    expect(played).toHaveLength(1);
  });
});
