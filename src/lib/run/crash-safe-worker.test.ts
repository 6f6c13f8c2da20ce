import { describe, expect, it } from 'vitest';
import { deferred, FakeWorker } from '../bridge/fake-worker';
import { WorkerBridge } from '../bridge/worker-bridge';
import { WorkerCrashed } from '../bridge/worker-errors';
import { CrashSafeWorker } from './crash-safe-worker';

/** A worker whose `call` answers its number only when the test says so, and whose `init` may fail. */
function workerApi(n: number, initFails: boolean) {
  const held = deferred<number>();
  return {
    held,
    init(): void {
      if (initFails) throw new Error('no backend');
    },
    call: (): Promise<number> => held.promise,
  };
}
type Api = Omit<ReturnType<typeof workerApi>, 'held'>;

function fixture(initFails = false) {
  const workers: FakeWorker[] = [];
  const apis: ReturnType<typeof workerApi>[] = [];
  const crashes: string[] = [];
  const worker = new CrashSafeWorker<WorkerBridge<Api>>(
    (onCrash) =>
      new WorkerBridge<Api>(() => {
        const api = workerApi(workers.length, initFails);
        apis.push(api);
        const w = new FakeWorker(api);
        workers.push(w);
        return w;
      }, onCrash),
    (b) => b.api.init(),
    (m) => crashes.push(m),
  );
  /** Answers the newest worker's calls with its number. */
  const answer = () => apis.at(-1)?.held.resolve(apis.length - 1);
  return { worker, workers, apis, crashes, answer };
}

/** Lets messages between the bridge and the fake worker go through. */
const settled = () => new Promise<void>((r) => setTimeout(r, 0));

describe('CrashSafeWorker', () => {
  it('starts one worker and reuses it', async () => {
    const { worker, workers, answer } = fixture();
    const first = worker.use((b) => b.api.call());
    await settled();
    answer();
    await expect(first).resolves.toBe(0);
    await expect(worker.use((b) => b.api.call())).resolves.toBe(0);
    expect(workers).toHaveLength(1);
    worker.dispose();
    expect(workers[0]?.terminated).toBe(true);
  });

  it('a crash rejects the call in flight, and the next use gets a new worker', async () => {
    // The evaluator's calls raced nothing: a crash mid-evaluation left them, and every
    // evaluation queued after them, waiting for ever.
    const { worker, workers, crashes, answer } = fixture();
    const inFlight = worker.use((b) => b.api.call());
    await settled();
    workers[0]?.crash('out of memory');
    await expect(inFlight).rejects.toThrow('the worker crashed: out of memory');
    await expect(inFlight).rejects.toBeInstanceOf(WorkerCrashed);
    expect(workers[0]?.terminated).toBe(true);
    expect(crashes).toEqual(['out of memory']);
    const next = worker.use((b) => b.api.call());
    await settled();
    answer();
    await expect(next).resolves.toBe(1);
    worker.dispose();
  });

  it('work that calls the worker again after a crash fails instead of starting another worker', async () => {
    const { worker, workers, answer } = fixture();
    await settled();
    const work = worker.use(async (b) => {
      await settled();
      workers[0]?.crash('gone');
      return b.api.call();
    });
    await expect(work).rejects.toThrow('the worker crashed: gone');
    expect(workers).toHaveLength(1);
    answer();
  });

  it('a worker that fails to start is terminated, and the next use tries a new one', async () => {
    const { worker, workers } = fixture(true);
    await expect(worker.use((b) => b.api.call())).rejects.toThrow('no backend');
    expect(workers[0]?.terminated).toBe(true);
    await expect(worker.use((b) => b.api.call())).rejects.toThrow('no backend');
    expect(workers).toHaveLength(2);
    expect(workers[1]?.terminated).toBe(true);
  });
});
