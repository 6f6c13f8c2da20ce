import { describe, expect, it } from 'vitest';
import { CoalescingQueue } from './coalescing-queue';

/** A promise and the function that resolves it. */
function gate(): { open: () => void; opened: Promise<void> } {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { open, opened };
}

describe('a coalescing queue', () => {
  it('runs one job at a time; requests made while one waits replace it, the newest wins', async () => {
    const done: number[] = [];
    const first = gate();
    const q = new CoalescingQueue<number>(async (v) => {
      if (v === 1) await first.opened;
      done.push(v);
    });
    q.ask(1); // starts at once, held by the gate
    await Promise.resolve();
    q.ask(2); // waits
    q.ask(3); // replaces 2
    q.ask(4); // replaces 3
    first.open();
    await q.idle();
    expect(done).toEqual([1, 4]);
    // With nothing waiting, the next request runs by itself.
    q.ask(5);
    await q.idle();
    expect(done).toEqual([1, 4, 5]);
  });

  it('queues one-off jobs behind the requests, never replaced, with their own result or error', async () => {
    const done: string[] = [];
    const q = new CoalescingQueue<string>(async (v) => {
      await Promise.resolve();
      done.push(v);
    });
    q.ask('a');
    const one = q.run(async () => {
      done.push('one-off');
      return 7;
    });
    const failing = q.run(() => Promise.reject(new Error('no version')));
    q.ask('b');
    expect(await one).toBe(7);
    await expect(failing).rejects.toThrow('no version');
    await q.idle();
    expect(done).toEqual(['a', 'one-off', 'b']);
  });

  it('goes on after a job that throws, and says what it threw', async () => {
    const errors: unknown[] = [];
    const done: number[] = [];
    const q = new CoalescingQueue<number>(
      async (v) => {
        await Promise.resolve();
        if (v === 1) throw new Error('evaluation failed');
        done.push(v);
      },
      (err) => errors.push(err),
    );
    q.ask(1);
    await q.idle();
    q.ask(2);
    await q.idle();
    expect(done).toEqual([2]);
    expect(String(errors[0])).toContain('evaluation failed');
  });
});
