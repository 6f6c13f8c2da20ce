import { afterEach, describe, expect, it, vi } from 'vitest';
import { StartUp, StartUpAbandoned } from './start-up';

/** A step of a start-up that answers when released (a trainer call, a storage read). */
function gate(): { promise: Promise<void>; release: () => void } {
  let release: () => void = () => undefined;
  const promise = new Promise<void>((r) => (release = r));
  return { promise, release };
}

afterEach(() => vi.useRealTimers());

describe('StartUp', () => {
  it('runs the steps to their end when nothing gives it up', async () => {
    const s = new StartUp();
    const built: string[] = [];
    await s.run(async (su) => {
      await Promise.resolve();
      su.check();
      built.push('session');
    });
    expect(built).toEqual(['session']);
    expect(s.abandoned).toBeNull();
  });

  it('a crash ends the wait at once, and the steps still in flight build nothing after it', async () => {
    // The trainer crashed while the start-up waited on the storage: the run ended, then the
    // start-up went on and built and started a session that no Stop could reach.
    const s = new StartUp();
    const storage = gate();
    const built: string[] = [];
    const steps = vi.fn(async (su: StartUp) => {
      await storage.promise;
      su.check();
      built.push('session');
    });
    const running = s.run(steps);
    s.abandon(new Error('the trainer worker crashed'));
    await expect(running).rejects.toThrow('the trainer worker crashed');
    storage.release();
    await new Promise((r) => setTimeout(r, 0));
    expect(built).toEqual([]);
    expect(() => s.check()).toThrow(StartUpAbandoned);
  });

  it('a Stop gives a start-up that does not answer its time, then gives it up, naming what it waited on', async () => {
    vi.useFakeTimers();
    const s = new StartUp();
    const hung = gate();
    const running = s.run(async (su) => {
      await su.step('the storage', Promise.resolve());
      await su.step('the trainer', hung.promise);
    });
    const outcome = running.then(
      () => 'ended',
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    s.stopWithin(10_000);
    await vi.advanceTimersByTimeAsync(9_999);
    expect(s.abandoned).toBeNull();
    await vi.advanceTimersByTimeAsync(1);
    expect(await outcome).toBe(
      "the run's start-up did not end within 10 s of the Stop (it was waiting for the trainer): it was given up",
    );
    expect(s.gaveUpWaitingOn).toBe('the trainer'); // the page starts that one again
    hung.release();
    await vi.advanceTimersByTimeAsync(0);
  });

  it('a step checks after its await: a start-up given up meanwhile goes no further', async () => {
    const s = new StartUp();
    const storage = gate();
    const built: string[] = [];
    const running = s.run(async (su) => {
      const db = await su.step(
        'the storage',
        storage.promise.then(() => 'db'),
      );
      built.push(db);
    });
    s.abandon(new Error('the trainer worker crashed'));
    await expect(running).rejects.toThrow('crashed');
    storage.release();
    await new Promise((r) => setTimeout(r, 0));
    expect(built).toEqual([]);
    expect(s.gaveUpWaitingOn).toBe('the storage');
  });

  it('a Stop answered in time changes nothing: the start-up ends by itself', async () => {
    vi.useFakeTimers();
    const s = new StartUp();
    const step = gate();
    const running = s.run(async (su) => {
      await step.promise;
      su.check();
    });
    s.stopWithin(10_000);
    await vi.advanceTimersByTimeAsync(5_000);
    step.release();
    await running;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(s.abandoned).toBeNull();
  });

  it('a step that fails gives the start-up up with its own error (the first reason wins)', async () => {
    const s = new StartUp();
    await expect(
      s.run(async () => {
        await Promise.resolve();
        throw new Error('no stored run r1');
      }),
    ).rejects.toThrow('no stored run r1');
    s.abandon(new Error('later'));
    expect(s.abandoned?.message).toBe('no stored run r1');
    expect(s.gaveUpWaitingOn).toBeNull(); // its own failure: nothing it waits on is suspect
  });
});
