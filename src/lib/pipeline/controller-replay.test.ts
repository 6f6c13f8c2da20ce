import { describe, expect, it } from 'vitest';
import { DEFAULT_ENV_CONFIG } from '../env/config';
import { DEFAULT_REPLAY } from '../rl/replay-config';
import { Pipeline, type PipelineConfig } from './controller';
import { FakeSource, FakeTrainer, flush, setup, trajectory } from './controller.fakes';
import type { PlayedGroup } from './types';

describe('Pipeline replay', () => {
  it('prioritized replay trains once per B new groups and weights by importance', async () => {
    const { p, trainer, ws } = setup({
      eta: 8,
      replay: { ...DEFAULT_REPLAY, mode: 'prioritized' },
    });
    ws[0]?.finishAll();
    await flush();
    expect(trainer.calls).toHaveLength(1);
    trainer.finish();
    await flush();
    expect(p.buffer.size).toBe(2); // kept for reuse
    ws[1]?.finish([...(ws[1]?.jobs.keys() ?? [])][0] ?? -1);
    await flush();
    expect(trainer.calls).toHaveLength(0); // one new group is not enough
    ws[1]?.finish([...(ws[1]?.jobs.keys() ?? [])][0] ?? -1);
    await flush();
    expect(trainer.calls).toHaveLength(1);
    const w = Array.from(trainer.calls[0]?.advantages ?? []);
    expect(Math.max(...w)).toBeCloseTo(1);
  });

  it('prioritized replay keeps the staleness bound: trained groups that age out stay accepted', async () => {
    // η = 1, B = 2, 8 slots: at most (η + 1)·B = 4 groups may be ahead of the trainer. Trained
    // groups stay in the prioritized buffer until they are stale; when they go they retire (no
    // stale drop, still accepted), or the bound would grow by B with every version.
    const eta = 1;
    const { p, trainer, ws, running } = setup({ eta, replay: { ...DEFAULT_REPLAY, mode: 'prioritized' } }, 4);
    let most = 0;
    for (let round = 0; round < 12; round++) {
      most = Math.max(most, running());
      for (const w of ws) w.finishAll();
      await flush();
      while (trainer.calls.length) {
        trainer.finish();
        await flush();
        most = Math.max(most, running());
      }
    }
    expect(p.version).toBeGreaterThanOrEqual(10);
    expect(most).toBeLessThanOrEqual((eta + 1) * 2);
    // Every group played was trained before it went stale: none is a stale drop.
    expect(p.counters.staleDrops).toBe(0);
    expect(p.accepted + running()).toBeLessThanOrEqual((eta + p.version + 1) * 2);
  });

  it('prioritized replay with a full buffer (unbounded η) keeps training, and a group trained meanwhile is no overflow', async () => {
    // Rollouts faster than the trainer: every new group pushes out an old one. Each new group
    // still counts towards the next batch, so the trainer is never starved.
    const { p, trainer, ws } = setup(
      { eta: Infinity, replay: { ...DEFAULT_REPLAY, mode: 'prioritized', capacity: 4 } },
      2,
    );
    for (let round = 0; round < 10; round++) {
      for (const w of ws) w.finishAll();
      await flush();
      for (const w of ws) w.finishAll(); // a second wave while the step computes
      await flush();
      expect(trainer.calls, `round ${round}`).toHaveLength(1);
      trainer.finish();
      await flush();
    }
    expect(p.version).toBe(10);
    expect(p.counters.replayOverflow).toBeGreaterThan(0);
    expect(p.accepted + p.counters.replayOverflow).toBe(p.counters.startedGroups - p.runningGroups);
  });

  it('prioritized replay: groups pushed out while the trainer computes them were trained, not overflowed', async () => {
    const { p, trainer, ws } = setup(
      { eta: Infinity, replay: { ...DEFAULT_REPLAY, mode: 'prioritized', capacity: 2 } },
      1,
    );
    ws[0]?.finishAll(); // 2 groups: the buffer is full, and both are drawn
    await flush();
    expect(trainer.calls).toHaveLength(1);
    ws[0]?.finishAll(); // 2 more push out the two the trainer is computing
    await flush();
    expect(p.counters.replayOverflow).toBe(0);
    expect(p.accepted).toBe(4);
    trainer.finish();
    await flush();
    expect(p.version).toBe(1);
    expect(p.counters.replayOverflow).toBe(0);
  });

  it('prioritized replay at η = 0 trains again after a trainer restart whose step was not published', async () => {
    const { p, trainer, ws, running } = setup({ eta: 0, replay: { ...DEFAULT_REPLAY, mode: 'prioritized' } });
    for (const w of ws) w.finishAll();
    await flush();
    expect(trainer.calls).toHaveLength(1);
    p.trainerLost();
    const again = new FakeTrainer();
    p.trainerRestored(again, 0); // nothing was published: the batch is drawn again
    await flush();
    expect(again.calls).toHaveLength(1);
    again.finish();
    await flush();
    expect(p.version).toBe(1);
    expect(running()).toBe(2); // and the next batch's jobs start
  });

  it('a full FIFO buffer (unbounded η) pushes out its oldest groups, counted and no longer accepted', async () => {
    const { p, ws } = setup({ eta: Infinity, replay: { ...DEFAULT_REPLAY, capacity: 2 } }, 1);
    p.trainerLost(); // no trainer: groups pile up
    for (let i = 0; i < 3; i++) {
      ws[0]?.finishAll();
      await flush();
    }
    expect(p.buffer.size).toBe(2);
    expect(p.counters.replayOverflow).toBe(4);
    expect(p.accepted).toBe(2);
    // The trainer is back: its first version marks the pushed-out groups' samples consumed too.
    const trainer = new FakeTrainer();
    p.trainerRestored(trainer, 0);
    await flush();
    // 4 groups pushed out and the 2 of the batch, 2 samples each: every sample played so far.
    const seqs = [...(trainer.calls[0]?.seqs ?? [])].sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: 6 * 2 }, (_, i) => i));
  });

  it('a resumed run with more unconsumed groups than the buffer holds pushes out the stalest, counted', async () => {
    const played = (jobId: number): PlayedGroup => ({
      jobId,
      status: 'done',
      trajectories: [trajectory(0, true), trajectory(0, false)],
      relabelled: [],
      seqs: [2 * jobId, 2 * jobId + 1],
      oldestVersion: 0,
      newestVersion: 0,
      interrupted: 0,
      startedAt: 0,
      endedAt: 0,
    });
    const trainer = new FakeTrainer();
    const config: PipelineConfig = {
      eta: Infinity,
      batchGroups: 2,
      groupSize: 2,
      slotsPerWorker: 1,
      preemptAfterMs: 0,
      replay: { ...DEFAULT_REPLAY, capacity: 2 },
      env: DEFAULT_ENV_CONFIG,
      relabelMaxAbs: 0,
      relabelMutations: 0,
      seed: 1,
      maxJobFailures: 1,
    };
    const p = new Pipeline(
      config,
      new FakeSource(),
      trainer,
      'run',
      {},
      {
        version: 3,
        nextSeq: 22,
        nextJobId: 4,
        groups: [0, 1, 2, 3].map(played),
        superseded: [20, 21], // an attempt a retry superseded: never trained, marked consumed
      },
    );
    expect(p.buffer.size).toBe(2);
    expect(p.counters.replayOverflow).toBe(2);
    expect(p.accepted).toBe(3 * 2 + 2);
    p.start(0);
    await flush();
    // The first version trains the two kept groups and marks the two pushed out consumed, and
    // the superseded attempt's seqs.
    const seqs = [...(trainer.calls[0]?.seqs ?? [])].sort((a, b) => a - b);
    expect(seqs).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 20, 21]);
    // Had it stopped before that version, Stop would take the pushed-out seqs to mark them itself.
    const q = new Pipeline(
      config,
      new FakeSource(),
      new FakeTrainer(),
      'run',
      {},
      {
        version: 3,
        nextSeq: 8,
        nextJobId: 4,
        groups: [0, 1, 2, 3].map(played),
      },
    );
    expect(q.takeSettled()).toEqual([0, 1, 2, 3]);
    expect(q.takeSettled()).toEqual([]);
  });
});
