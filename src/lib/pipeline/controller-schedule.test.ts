import { describe, expect, it } from 'vitest';
import { Pipeline } from './controller';
import { FakeSource, FakeTrainer, FakeWorker, configOf } from './controller.fakes';
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
