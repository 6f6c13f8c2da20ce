import * as Comlink from 'comlink';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { deferred, FakeWorker } from './fake-worker';
import { DEFAULT_CALL_MS, WorkerBridge } from './worker-bridge';
import { WorkerCrashed, WorkerTerminated, WorkerTimeout } from './worker-errors';

/** The fake worker's API: answers at once, reports progress through a callback, or never answers. */
function fakeApi() {
  const held = deferred<string>();
  return {
    held,
    add: (a: number, b: number) => a + b,
    async count(n: number, onStep: (i: number) => void): Promise<number> {
      for (let i = 1; i <= n; i++) await onStep(i);
      return n;
    },
    hang: (): Promise<string> => held.promise,
    long: (): Promise<string> => held.promise,
  };
}
type Api = Omit<ReturnType<typeof fakeApi>, 'held'>;

let bridges: WorkerBridge<Api>[] = [];

/** A bridge over fake workers (one per start), with the crashes it reported. */
function fixture() {
  const workers: FakeWorker[] = [];
  const apis: ReturnType<typeof fakeApi>[] = [];
  const crashes: { message: string; inFlight: number }[] = [];
  const bridge: WorkerBridge<Api> = new WorkerBridge<Api>(
    () => {
      const api = fakeApi();
      apis.push(api);
      const w = new FakeWorker(api);
      workers.push(w);
      return w;
    },
    (message) => crashes.push({ message, inFlight: bridge.inFlight }),
    { name: 'the test worker', timeoutMs: 1_000, methodTimeouts: { long: null } },
  );
  bridges.push(bridge);
  return { bridge, workers, apis, crashes };
}

/** Lets the call's message reach the fake worker (a real event-loop turn, not a timer). */
const delivered = () => new Promise<void>((r) => setTimeout(r, 0));

afterEach(() => {
  vi.useRealTimers();
  for (const b of bridges) b.terminate();
  bridges = [];
});

describe('WorkerBridge', () => {
  it('answers a call, starting the worker on first use, and passes proxied callbacks through', async () => {
    const { bridge, workers } = fixture();
    expect(workers).toHaveLength(0);
    await expect(bridge.api.add(2, 3)).resolves.toBe(5);
    const steps: number[] = [];
    await expect(
      bridge.api.count(
        3,
        Comlink.proxy((i: number) => void steps.push(i)),
      ),
    ).resolves.toBe(3);
    expect(steps).toEqual([1, 2, 3]);
    expect(workers).toHaveLength(1);
    expect(bridge.state).toBe('running');
    expect(bridge.inFlight).toBe(0);
  });

  it('a crash rejects the call in flight with WorkerCrashed, once the owner is told', async () => {
    const { bridge, workers, crashes } = fixture();
    const call = bridge.api.hang();
    await delivered();
    expect(bridge.inFlight).toBe(1);
    workers[0]?.crash('out of memory');
    const err = await call.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkerCrashed);
    expect(err).toMatchObject({
      name: 'WorkerCrashed',
      workerMessage: 'out of memory',
      message: 'the test worker crashed: out of memory',
    });
    expect(crashes).toEqual([{ message: 'out of memory', inFlight: 0 }]);
    expect(workers[0]?.terminated).toBe(true);
    expect(bridge.state).toBe('crashed');
  });

  it('a restart in the crash handler leaves the calls in flight crashed, and the new worker answers', async () => {
    const workers: FakeWorker[] = [];
    // An owner that still races a failure signal of its own sees its own reason first.
    let own: (err: Error) => void = () => undefined;
    const ownSignal = new Promise<never>((_, reject) => (own = reject));
    const bridge: WorkerBridge<Api> = new WorkerBridge<Api>(
      () => {
        const w = new FakeWorker(fakeApi());
        workers.push(w);
        return w;
      },
      () => {
        own(new Error('own reason'));
        bridge.restart();
      },
    );
    bridges.push(bridge);
    const call = bridge.api.hang();
    const raced = Promise.race([call, ownSignal]);
    await delivered();
    workers[0]?.crash('boom');
    await expect(raced).rejects.toThrow('own reason');
    await expect(call).rejects.toThrow(WorkerCrashed);
    expect(bridge.state).toBe('running');
    await expect(bridge.api.add(2, 5)).resolves.toBe(7);
    expect(workers).toHaveLength(2);
  });

  it('a crashed bridge rejects later calls until it is started again', async () => {
    const { bridge, workers } = fixture();
    await bridge.api.add(1, 1);
    workers[0]?.unreadable();
    await expect(bridge.api.add(1, 1)).rejects.toThrow('the test worker crashed: worker sent a message');
    expect(workers).toHaveLength(1);
    bridge.restart();
    await expect(bridge.api.add(1, 2)).resolves.toBe(3);
    expect(workers).toHaveLength(2);
  });

  it('a failed load (an error event with no message) is a crash too', async () => {
    const { bridge, workers } = fixture();
    const call = bridge.api.hang();
    workers[0]?.crash('');
    await expect(call).rejects.toThrow('the test worker crashed: worker failed to load or threw');
  });

  it('terminate() rejects the call in flight with WorkerTerminated; the next use starts a new worker', async () => {
    const { bridge, workers } = fixture();
    const call = bridge.api.hang();
    await delivered();
    bridge.terminate();
    const err = await call.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkerTerminated);
    expect(err).toMatchObject({
      restarted: false,
      message: 'the test worker was terminated before it answered',
    });
    expect(workers[0]?.terminated).toBe(true);
    expect(bridge.state).toBe('stopped');
    await expect(bridge.api.add(4, 4)).resolves.toBe(8);
    expect(workers).toHaveLength(2);
  });

  it('restart() rejects the call in flight with WorkerTerminated, and calls after it work', async () => {
    const { bridge, workers, crashes } = fixture();
    const call = bridge.api.hang();
    await delivered();
    bridge.restart();
    await expect(call).rejects.toThrow(WorkerTerminated);
    await expect(call).rejects.toThrow('the test worker was restarted before it answered');
    await expect(bridge.api.add(1, 2)).resolves.toBe(3);
    expect(workers.map((w) => w.terminated)).toEqual([true, false]);
    // The old worker's late error is not the new one's crash.
    workers[0]?.crash('late');
    expect(crashes).toEqual([]);
    await expect(bridge.api.add(2, 2)).resolves.toBe(4);
  });

  it('a call no one waits on, cut short when the worker ends, is no unhandled rejection', async () => {
    const { bridge } = fixture();
    const unhandled: unknown[] = [];
    const note = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', note);
    void bridge.api.hang();
    await delivered();
    bridge.terminate();
    await delivered();
    await delivered();
    process.off('unhandledRejection', note);
    expect(unhandled).toEqual([]);
  });

  it('a call unanswered past its limit rejects with WorkerTimeout naming the method and the limit', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { bridge } = fixture();
    const call = bridge.api.hang();
    const outcome = call.then(
      () => 'answered',
      (e: unknown) => e,
    );
    await vi.advanceTimersByTimeAsync(999);
    expect(bridge.inFlight).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    const err = await outcome;
    expect(err).toBeInstanceOf(WorkerTimeout);
    expect(err).toMatchObject({ method: 'hang', limitMs: 1_000 });
    expect((err as Error).message).toBe('the test worker did not answer hang() within 1000 ms');
    expect(bridge.inFlight).toBe(0);
    // The worker itself is left alone: a timeout is the caller's to act on.
    expect(bridge.state).toBe('running');
  });

  it('a method without a limit waits as long as it takes; withTimeout sets a call site its own', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { bridge, apis } = fixture();
    const long = bridge.api.long();
    const patient = bridge.withTimeout(5_000).hang();
    const patientOutcome = patient.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(bridge.inFlight).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(await patientOutcome).toMatchObject({ method: 'hang', limitMs: 5_000 });
    await vi.advanceTimersByTimeAsync(DEFAULT_CALL_MS * 10);
    apis[0]?.held.resolve('done');
    await expect(long).resolves.toBe('done');
  });

  it('an answer clears its timer: no timeout after it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { bridge } = fixture();
    await expect(bridge.api.add(1, 1)).resolves.toBe(2);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('keeps comlink symbols reachable and is not a thenable', async () => {
    const { bridge } = fixture();
    const api = bridge.api;
    expect(typeof api[Comlink.releaseProxy]).toBe('function');
    expect(await Promise.resolve(api)).toBe(api);
  });
});
