import { afterEach, describe, expect, it, vi } from 'vitest';
import { failureSignal, settlesWithin } from './failure-signal';

afterEach(() => vi.useRealTimers());

describe('failure signals', () => {
  it('reject what races them when told to, and are not unhandled meanwhile', async () => {
    const s = failureSignal();
    const never = new Promise<number>(() => undefined);
    const raced = Promise.race([never, s.promise]);
    s.reject(new Error('crashed'));
    await expect(raced).rejects.toThrow('crashed');
  });

  it('bound a wait on a worker that may never answer', async () => {
    vi.useFakeTimers();
    const late = settlesWithin(new Promise(() => undefined), 1_000);
    await vi.advanceTimersByTimeAsync(999);
    const early = settlesWithin(Promise.reject(new Error('failed')), 1_000);
    await vi.advanceTimersByTimeAsync(1);
    await expect(late).resolves.toBe(false);
    await expect(early).resolves.toBe(true);
  });
});
