import { describe, expect, it, vi } from 'vitest';
import { DEFAULT_ENV_CONFIG } from '../env/config';
import type { Task } from '../env/suite';
import type { StepMetrics } from '../rl/trainer';
import type { TokenBatch } from '../rl/batch';
import { DEFAULT_REPLAY } from '../rl/replay';
import type { Trajectory } from '../rl/trajectory';
import { Pipeline, type JobSource, type PipelineConfig } from './controller';
import type { TimelineEvent } from './events';
import type { JobClass } from './scheduler';
import type {
  PipelineTrainerPort,
  PlayedGroup,
  RolloutJob,
  RolloutPort,
  StepReport,
  TrainOutcome,
} from './types';

const task = (id: string): Task => ({ id, level: 'easy', examples: [], hidden: [] });

function trajectory(version: number, solved: boolean): Trajectory {
  return {
    taskId: 't',
    level: 'easy',
    group: 't',
    tokens: [1, 2],
    owned: [0, 1],
    rewards: [0, solved ? 1 : 0],
    logProbs: [0, -1],
    values: [0, 0],
    versions: [-1, version],
    legal: new Uint8Array(0),
    solved,
    turns: 1,
    return: solved ? 1 : 0,
    parts: { pass: 0, ranOk: 0, closeness: 0, turnCost: 0, noSubmit: 0, total: 0 },
  };
}

/** A rollout worker whose jobs finish when the test says so. */
class FakeWorker implements RolloutPort {
  readonly jobs = new Map<number, { job: RolloutJob; resolve: (g: PlayedGroup) => void }>();
  readonly aborted: number[] = [];
  play(job: RolloutJob): Promise<PlayedGroup> {
    return new Promise((resolve) => this.jobs.set(job.jobId, { job, resolve }));
  }
  async abort(jobId: number): Promise<void> {
    this.aborted.push(jobId);
    this.jobs.delete(jobId);
  }
  /** Finishes a job with every token stamped `version` (default: the job's minVersion). */
  finish(jobId: number, version?: number, interrupted = 0): void {
    const j = this.jobs.get(jobId);
    if (!j) throw new Error(`no job ${jobId}`);
    this.jobs.delete(jobId);
    const v = version ?? j.job.minVersion;
    j.resolve({
      jobId,
      status: 'done',
      trajectories: Array.from({ length: j.job.samples }, (_, i) => trajectory(v, i === 0)),
      relabelled: [],
      seqs: Array.from({ length: j.job.samples }, (_, i) => j.job.seqBase + i),
      oldestVersion: j.job.minVersion,
      newestVersion: v,
      interrupted,
      startedAt: 0,
      endedAt: 0,
    });
  }
  finishAll(version?: number): void {
    for (const id of [...this.jobs.keys()]) this.finish(id, version);
  }
}

const METRICS: StepMetrics = {
  step: 1,
  lossKind: 'decoupled',
  loss: 0.5,
  pgLoss: 0,
  valueLoss: 0,
  entropy: 0,
  gradNorm: 0,
  approxKl: 0,
  clipFrac: 0,
  wMean: 1,
  lagKl: 0,
  wMax: 1,
  maskedFrac: 0,
  learningRate: 0,
  ms: 0,
};

/** A trainer whose steps finish when the test says so. */
class FakeTrainer implements PipelineTrainerPort {
  calls: {
    seqs: number[];
    fromVersion: number;
    advantages: Float32Array;
    resolve: (o: TrainOutcome) => void;
    reject: (e: Error) => void;
  }[] = [];
  trainAndPublish(batch: TokenBatch, info: { fromVersion: number; seqs: number[] }): Promise<TrainOutcome> {
    return new Promise((resolve, reject) =>
      this.calls.push({ ...info, advantages: batch.advantages, resolve, reject }),
    );
  }
  /** Finishes the oldest pending step. */
  finish(): void {
    const c = this.calls.shift();
    if (!c) throw new Error('no pending step');
    c.resolve({ version: c.fromVersion + 1, metrics: METRICS, startedAt: 0, publishedAt: 0 });
  }
}

class FakeSource implements JobSource {
  n = 0;
  recorded = 0;
  cls: JobClass = 'normal';
  nextTask() {
    this.n += 1;
    return { task: task(`t${this.n}`), cls: this.cls, value: 0.25 - this.n / 1000 };
  }
  record(): void {
    this.recorded += 1;
  }
  batch(groups: readonly PlayedGroup[], weights: readonly number[]) {
    const batch: TokenBatch = {
      batch: 1,
      length: 1,
      tokens: new Int32Array(1),
      actions: new Int32Array(1),
      mask: new Float32Array([1]),
      advantages: Float32Array.from(weights),
      returns: new Float32Array(1),
    };
    return { batch, priorities: groups.map(() => 1) };
  }
}

const flush = () => new Promise((r) => setTimeout(r, 0));

function configOf(over: Partial<PipelineConfig> = {}): PipelineConfig {
  return {
    eta: 0,
    batchGroups: 2,
    groupSize: 2,
    slotsPerWorker: 2,
    preemptAfterMs: 0,
    replay: DEFAULT_REPLAY,
    env: DEFAULT_ENV_CONFIG,
    relabelMaxAbs: 0,
    relabelMutations: 0,
    seed: 1,
    maxJobFailures: 1,
    ...over,
  };
}

function setup(over: Partial<PipelineConfig> = {}, workers = 3) {
  const config = configOf(over);
  const source = new FakeSource();
  const trainer = new FakeTrainer();
  const events: TimelineEvent[] = [];
  const errors: string[] = [];
  const steps: number[] = [];
  const reports: StepReport[] = [];
  const p = new Pipeline(config, source, trainer, 'run', {
    emit: (e) => events.push(e),
    onError: (m) => errors.push(m),
    onStep: (r) => {
      steps.push(r.version);
      reports.push(r);
    },
  });
  const ws = Array.from({ length: workers }, () => new FakeWorker());
  ws.forEach((w, i) => p.addWorker(`w${i}`, w, `rollout-${i}`));
  p.start(0);
  const running = () => ws.reduce((n, w) => n + w.jobs.size, 0);
  return { p, source, trainer, ws, events, errors, steps, reports, running };
}

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

  it('requeues the jobs of a worker that died at the highest class, and they start first', async () => {
    const { p, ws, events } = setup({ eta: 4, preemptAfterMs: 60_000 }, 2);
    const lost = [...(ws[0]?.jobs.values() ?? [])].map((j) => j.job.task.id);
    expect(lost).toHaveLength(2);
    p.removeWorker('w0', 'test');
    expect(p.counters.requeues).toBe(2);
    expect(events.filter((e) => e.kind === 'requeue')).toHaveLength(2);
    const fresh = new FakeWorker();
    p.addWorker('w0b', fresh, 'rollout-0');
    const started = [...fresh.jobs.values()].map((j) => j.job);
    expect(started.map((j) => j.task.id).sort()).toEqual([...lost].sort());
    expect(started.every((j) => j.cls === 'high')).toBe(true);
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
});
