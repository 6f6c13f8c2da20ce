import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_ENV_CONFIG } from '../env/config';
import type { WaitingJob } from './rollout-engine-types';
import type { RolloutJob } from '../pipeline/types';
import { waitForVersion } from './version-wait';

describe('waitForVersion', () => {
  afterEach(() => vi.useRealTimers());

  it('asks the store every fetchAfterMs, one fetch at a time, until the version arrives', async () => {
    vi.useFakeTimers();
    const waiting = new Set<WaitingJob>();
    const asked: number[] = [];
    let fail = true;
    const fetch = (min: number) => {
      asked.push(min);
      fail = !fail;
      return fail ? Promise.reject(new Error('store busy')) : Promise.resolve();
    };
    const job: RolloutJob = {
      jobId: 3,
      minVersion: 5,
      env: DEFAULT_ENV_CONFIG,
      runId: 'r',
      task: { id: 't', level: 'easy', examples: [], hidden: [] },
      samples: 1,
      seqBase: 0,
      seed: 1,
      relabelMaxAbs: 0,
      relabelMutations: 0,
      cls: 'normal',
      value: 0,
    };
    const done = waitForVersion(waiting, job, { fetch, fetchAfterMs: 100 });
    expect(waiting.size).toBe(1);
    await vi.advanceTimersByTimeAsync(99);
    expect(asked).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(asked).toEqual([5]);
    await vi.advanceTimersByTimeAsync(200); // a failed fetch does not stop the asking
    expect(asked).toEqual([5, 5, 5]);
    const [w] = waiting;
    w?.wake();
    expect(await done).toBe(w);
    expect(w?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(asked).toHaveLength(3);
    expect(waiting.size).toBe(1); // the caller removes the entry
  });
});
