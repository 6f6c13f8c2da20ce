import { describe, expect, it } from 'vitest';
import { CrashSafeWorker } from './crash-safe-worker';

/** A bridge whose calls answer only when told to, and whose worker can be made to crash. */
class FakeBridge {
  terminated = false;
  readonly pending: (() => void)[] = [];
  constructor(
    readonly n: number,
    readonly crash: (message: string) => void,
  ) {}
  call(): Promise<number> {
    return new Promise((resolve) => this.pending.push(() => resolve(this.n)));
  }
  terminate(): void {
    this.terminated = true;
  }
}

function fixture(initFails = false) {
  const bridges: FakeBridge[] = [];
  const crashes: string[] = [];
  const worker = new CrashSafeWorker<FakeBridge>(
    (onCrash) => {
      const b = new FakeBridge(bridges.length, onCrash);
      bridges.push(b);
      return b;
    },
    async () => {
      if (initFails) throw new Error('no backend');
    },
    (m) => crashes.push(m),
  );
  return { worker, bridges, crashes };
}

describe('CrashSafeWorker', () => {
  it('starts one worker and reuses it', async () => {
    const { worker, bridges } = fixture();
    const first = worker.use((b) => {
      queueMicrotask(() => b.pending.shift()?.());
      return b.call();
    });
    await expect(first).resolves.toBe(0);
    const second = worker.use((b) => {
      queueMicrotask(() => b.pending.shift()?.());
      return b.call();
    });
    await expect(second).resolves.toBe(0);
    expect(bridges).toHaveLength(1);
  });

  it('a crash rejects the call in flight, and the next use gets a new worker', async () => {
    // The evaluator's calls raced nothing: a crash mid-evaluation left them, and every
    // evaluation queued after them, waiting for ever.
    const { worker, bridges, crashes } = fixture();
    const inFlight = worker.use((b) => b.call());
    await Promise.resolve();
    await Promise.resolve();
    bridges[0]?.crash('out of memory');
    await expect(inFlight).rejects.toThrow('the worker crashed: out of memory');
    expect(bridges[0]?.terminated).toBe(true);
    expect(crashes).toEqual(['out of memory']);
    const next = worker.use((b) => {
      queueMicrotask(() => b.pending.shift()?.());
      return b.call();
    });
    await expect(next).resolves.toBe(1);
  });

  it('a worker that fails to start is terminated, and the next use tries a new one', async () => {
    const { worker, bridges } = fixture(true);
    await expect(worker.use((b) => b.call())).rejects.toThrow('no backend');
    expect(bridges[0]?.terminated).toBe(true);
    await expect(worker.use((b) => b.call())).rejects.toThrow('no backend');
    expect(bridges).toHaveLength(2);
  });
});
