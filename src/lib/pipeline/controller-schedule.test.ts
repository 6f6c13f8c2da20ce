import { describe, expect, it } from 'vitest';
import { Pipeline } from './controller';
import { FakeSource, FakeTrainer, FakeWorker, configOf, flush, setup, task } from './controller.fakes';
import { fitsBudget, overBudget } from './scheduler';
import type { TimelineEvent } from './events';
import { account } from './ledger';
import type { ScheduleKind } from '../config/run-config';

/**
 * A source whose n-th task expects the n-th of `rewards`; its learning value falls with n, or
 * rises with it when `rising` (so that value order and arrival order disagree).
 */
class RewardSource extends FakeSource {
  constructor(
    private readonly rewards: readonly number[],
    private readonly rising = false,
  ) {
    super();
  }
  override nextTask() {
    const t = super.nextTask();
    return { ...t, expectedReward: this.rewards[this.n - 1] ?? 0, ...(this.rising ? { value: this.n } : {}) };
  }
}

/** The job ids a fresh worker starts, in order, after w0 died with its two jobs (ids 0 and 1). */
function restartOrder(schedule?: ScheduleKind, rising = false): number[] {
  const p = new Pipeline(
    configOf({ eta: 4, preemptAfterMs: 60_000, ...(schedule ? { schedule } : {}) }),
    new RewardSource([0.1, 0.9, 0.5, 0.3], rising),
    new FakeTrainer(),
    'run',
  );
  const ws = [new FakeWorker(), new FakeWorker()];
  ws.forEach((w, i) => p.addWorker(`w${i}`, w, `rollout-${i}`));
  p.start(0);
  // w0 joined first and took jobs 0 and 1 (expecting 0.1 and 0.9); w1 took 2 and 3.
  expect([...(ws[0]?.jobs.keys() ?? [])]).toEqual([0, 1]);
  p.removeWorker('w0', 'test');
  const fresh = new FakeWorker();
  p.addWorker('w2', fresh, 'rollout-2');
  const started = [...fresh.jobs.values()].map((j) => j.job);
  p.stop();
  return started.map((j) => j.jobId);
}

describe('Pipeline scheduling', () => {
  it('requeued jobs start by expected reward under expected-reward, by learning value or arrival otherwise', () => {
    expect(restartOrder('expected-reward')).toEqual([1, 0]); // 0.9 before 0.1
    expect(restartOrder('learning-value')).toEqual([0, 1]); // the fake's values fall with the id
    expect(restartOrder(undefined)).toEqual([0, 1]);
    expect(restartOrder('fifo')).toEqual([0, 1]); // requeued together: by id
    // Values rising with the id: learning value puts job 1 first, FIFO still job 0.
    expect(restartOrder('learning-value', true)).toEqual([1, 0]);
    expect(restartOrder('fifo', true)).toEqual([0, 1]);
  });

  it('a job keeps its expected reward through a requeue', () => {
    const p = new Pipeline(
      configOf({ eta: 4, preemptAfterMs: 60_000, schedule: 'expected-reward' }),
      new RewardSource([0.7]),
      new FakeTrainer(),
      'run',
    );
    const w = new FakeWorker();
    p.addWorker('w0', w, 'rollout-0');
    p.start(0);
    expect([...w.jobs.values()][0]?.job.expectedReward).toBe(0.7);
    p.removeWorker('w0', 'test');
    const fresh = new FakeWorker();
    p.addWorker('w1', fresh, 'rollout-1');
    const again = [...fresh.jobs.values()].find((j) => j.job.jobId === 0)?.job;
    expect(again).toMatchObject({ cls: 'high', expectedReward: 0.7 });
    p.stop();
  });
});

describe('Pipeline preemption by expected reward', () => {
  function run(rewards: number[], over: Partial<Parameters<typeof configOf>[0]> = {}) {
    const events: TimelineEvent[] = [];
    const trainer = new FakeTrainer();
    const p = new Pipeline(
      configOf({
        eta: 4,
        slotsPerWorker: 2,
        preemptAfterMs: 0,
        schedule: 'expected-reward',
        queueAhead: 1,
        preemptMargin: 0.5,
        ...over,
      }),
      new RewardSource(rewards),
      trainer,
      'run',
      { emit: (e) => events.push(e) },
    );
    const w = new FakeWorker();
    p.addWorker('w0', w, 'rollout-0');
    p.start(0);
    return { p, w, events, trainer };
  }

  it('a better waiting job preempts the worst running one, which later resumes from what it played', async () => {
    const { p, w, events, trainer } = run([0.1, 0.9, 1.5, 0.2, 0.3]);
    // Jobs 0 (0.1) and 1 (0.9) started; job 2 (1.5) was drawn ahead and preempted job 0 at once.
    expect(w.aborted).toEqual([0]);
    expect(p.counters.preemptions).toBe(1);
    expect([...w.jobs.keys()].sort()).toEqual([1, 2]);
    const mark = events.find((e) => e.kind === 'preempt');
    expect(mark?.meta).toMatchObject({
      job: 0,
      for: 2,
      reason: 'expected reward',
      expected: 0.1,
      waiting: 1.5,
    });
    await flush(); // the worker hands back job 0's prefix: it waits at the head of the queue
    expect(p.waitingGroups).toBe(2); // job 0 to resume, and job 3 drawn ahead
    p.tick();
    expect(p.counters.preemptions).toBe(1); // a job waiting to resume preempts nobody
    w.finish(1);
    await flush();
    const resumed = w.jobs.get(0)?.job;
    expect(resumed).toMatchObject({ jobId: 0, seqBase: 0, cls: 'high' });
    expect(resumed?.resume?.episodes).toHaveLength(2);
    expect(resumed?.resume?.episodes[0]?.tokens).toEqual([1, 2, 3]);
    expect(p.counters).toMatchObject({ resumed: 1, keptTokens: 6, requeues: 0 });
    // Once preempted, it is never the victim again, however good the waiting job.
    w.finish(2);
    await flush();
    expect(w.aborted).toEqual([0]);
    // It finishes, and its group is kept like any other: nothing was lost.
    w.finish(0);
    await flush();
    expect(p.counters.generatedEpisodes).toBe(6);
    // Each episode by its seq: job 0's under the seqs of its first launch.
    const batch = [...(trainer.calls[0]?.seqs ?? [])].sort((a, b) => a - b);
    trainer.finish();
    await flush();
    const ledger = p.ledger.view();
    expect(ledger.written).toEqual([0, 1, 2, 3, 4, 5]);
    expect(ledger.trained).toEqual(batch);
    expect(batch).toHaveLength(4);
    const waiting = ledger.written.filter((s) => !ledger.trained.includes(s));
    expect(account(ledger, ledger.written, waiting)).toEqual({ lost: [], orphans: [], waiting });
    p.stop();
  });

  it('a group that finishes as the run stops, past the abort, counts as written and waits unconsumed', async () => {
    const { p, ws } = setup({ eta: 4 });
    const w = ws[0];
    if (!w) throw new Error('no worker');
    w.abortTooLate = true;
    const [id, entry] = [...w.jobs.entries()][0] ?? [];
    if (id === undefined || !entry) throw new Error('no job');
    const seqs = Array.from({ length: entry.job.samples }, (_, i) => entry.job.seqBase + i);
    p.stop();
    w.finish(id);
    await flush();
    const ledger = p.ledger.view();
    expect(ledger.written).toEqual(seqs);
    expect(ledger.trained).toEqual([]);
    expect(p.accepted).toBe(0);
    // In the store and unconsumed: waiting for a resume, neither lost nor an orphan.
    expect(account(ledger, seqs, seqs)).toEqual({ lost: [], orphans: [], waiting: seqs });
  });

  it('no preemption below the margin, nor under another schedule', () => {
    const close = run([0.5, 0.9, 0.9]);
    expect(close.p.counters.preemptions).toBe(0);
    expect(close.p.waitingGroups).toBe(1); // drawn ahead, waiting for a free slot
    close.p.stop();
    const other = run([0.1, 0.9, 1.5], { schedule: 'learning-value' });
    expect(other.p.counters.preemptions).toBe(0);
    other.p.stop();
    // Nothing drawn ahead: nothing waits, nothing to preempt for.
    const none = run([0.1, 0.9, 1.5], { queueAhead: 0 });
    expect(none.p.waitingGroups).toBe(0);
    expect(none.p.counters.preemptions).toBe(0);
    none.p.stop();
  });

  it('a preempted job whose worker dies before handing back its prefix starts over', async () => {
    const { p, w } = run([0.1, 0.9, 1.5, 0.2]);
    expect(w.aborted).toEqual([0]);
    // The worker dies with the preemption in flight (its answer never comes).
    p.removeWorker('w0', 'test');
    const fresh = new FakeWorker();
    p.addWorker('w1', fresh, 'rollout-1');
    // Jobs 2 and 1, requeued with it, expect more: they start first.
    expect([...fresh.jobs.keys()].sort()).toEqual([1, 2]);
    fresh.finish(2);
    await flush();
    const again = fresh.jobs.get(0)?.job;
    expect(again).toMatchObject({ seqBase: 0, cls: 'high' });
    expect(again?.resume).toBeUndefined();
    // A late answer from the dead worker changes nothing.
    await flush();
    expect(fresh.jobs.get(0)?.job).toBe(again);
    p.stop();
  });

  it('counts the time jobs waited in the queue', async () => {
    const { p, w } = run([0.5, 0.9, 0.9, 0.9], { preemptMargin: 100 });
    await new Promise((r) => setTimeout(r, 30));
    w.finish(0);
    await flush();
    expect(p.counters.queueWaitMs).toBeGreaterThanOrEqual(25);
    p.stop();
  });

  it('with η = 0 a version releases its groups although new jobs wait drawn ahead', async () => {
    const { p, w } = run([0.5, 0.6, 0.7, 0.8, 0.9], { eta: 0, batchGroups: 2, preemptMargin: 100 });
    w.finishAll();
    await flush();
    expect(p.counters.generatedEpisodes).toBe(4);
    expect(p.inFlight).toEqual({ episodes: 4 }); // the batch of both groups went to the trainer
    p.stop();
  });
});

describe('Pipeline resource budgets', () => {
  /** A worker whose groups report a cost per episode by task (the fake source's tasks t1, t2, …). */
  class CostWorker extends FakeWorker {
    constructor(private readonly msOf: (taskId: string) => number) {
      super();
    }
    override finish(jobId: number, version?: number, interrupted = 0): void {
      const j = this.jobs.get(jobId);
      if (!j) throw new Error(`no job ${jobId}`);
      const resolve = j.resolve;
      const ms = this.msOf(j.job.task.id) * j.job.samples;
      j.resolve = (g) => resolve({ ...g, cost: { sandboxMs: ms, tokens: 4 * j.job.samples } });
      super.finish(jobId, version, interrupted);
    }
  }

  it('admits a job only where its expected cost fits the slots’ budget, and marks a group over it', async () => {
    const events: TimelineEvent[] = [];
    const source = new FakeSource();
    // Every task t1, t2, … costs 30 ms an episode, against a budget of 20: each is an overrun, and
    // once measured two such jobs (60) do not fit one worker's 2 slots × 20 ms.
    source.nextTask = function () {
      this.n += 1;
      return { task: task('same'), cls: 'normal' as const, value: 0.25 };
    };
    const p = new Pipeline(
      configOf({ eta: Infinity, slotsPerWorker: 2, budget: { sandboxMs: 20, tokens: 0 } }),
      source,
      new FakeTrainer(),
      'run',
      { emit: (e) => events.push(e) },
    );
    const w = new CostWorker(() => 30);
    p.addWorker('w0', w, 'rollout-0');
    p.start(0);
    // Never measured: expected to cost nothing, both slots filled.
    expect(w.jobs.size).toBe(2);
    w.finish(0);
    await flush();
    // Measured at 30 ms: over budget (marked), and with job 1 (expected 0 then) still running the
    // next one (expected 30) fits 30 ≤ 40 … but not a third: one slot stays free while both run.
    expect(p.counters.overruns).toBe(1);
    expect(events.find((e) => e.kind === 'overrun')?.meta).toMatchObject({ job: 0, task: 'same' });
    expect(w.jobs.size).toBe(2);
    w.finish(1);
    await flush();
    expect(w.jobs.size).toBe(1); // 30 + 30 > 2 × 20: the next job waits for the budget
    expect(p.counters.budgetWaits).toBe(1);
    expect(p.waitingGroups).toBe(1);
    // The worker's last job finishes: an empty worker always admits (nothing starves).
    w.finish(2);
    await flush();
    expect(w.jobs.size).toBe(1);
    p.stop();
  });
});

describe('scheduler budgets', () => {
  it('fitsBudget sums expected costs per field; 0 has no limit', () => {
    const c = (sandboxMs: number, tokens: number) => ({ sandboxMs, tokens });
    expect(fitsBudget(c(10, 5), [c(10, 5)], 1, c(20, 0))).toBe(true);
    expect(fitsBudget(c(10, 5), [c(11, 5)], 1, c(20, 0))).toBe(false);
    expect(fitsBudget(c(10, 5), [c(10, 5)], 1, c(0, 9))).toBe(false);
    expect(fitsBudget(c(1e6, 1e6), [c(1e6, 1e6)], 1, c(0, 0))).toBe(true);
    expect(overBudget(c(21, 0), c(20, 0))).toBe(true);
    expect(overBudget(c(20, 99), c(20, 0))).toBe(false);
  });
});
