import { afterEach, describe, expect, it } from 'vitest';
import type { RolloutApi } from '../../../workers/rollout.worker';
import { deferred, FakeWorker } from '../bridge/fake-worker';
import { WorkerBridge } from '../bridge/worker-bridge';
import type { EvalProgress, EvalRow } from '../env/evaluate';
import { TasksWorker, WorkerEnded } from './tasks-worker';

/** The parts of a rollout worker the tasks panel calls; `evaluate` reports once, then waits to be told. */
function rolloutApi() {
  const finish = deferred<EvalRow[]>();
  const inits: number[] = [];
  return {
    finish,
    inits,
    init(opts: { seed: number }) {
      inits.push(opts.seed);
      return { backend: 'cpu' };
    },
    loadPolicy: () => undefined,
    async evaluate(_req: unknown, onProgress: (p: EvalProgress) => void): Promise<EvalRow[]> {
      await onProgress({ agent: 'random', mode: 'greedy', done: 1, total: 2 });
      return finish.promise;
    },
    tryProgram: () => ({ rows: [], runError: null }),
  };
}

let bridges: WorkerBridge<RolloutApi>[] = [];

function fixture() {
  const workers: FakeWorker[] = [];
  const apis: ReturnType<typeof rolloutApi>[] = [];
  const owner: { worker?: TasksWorker } = {};
  const bridge = new WorkerBridge<RolloutApi>(
    () => {
      const api = rolloutApi();
      apis.push(api);
      const w = new FakeWorker(api);
      workers.push(w);
      return w;
    },
    (m) => owner.worker?.end(`crashed: ${m}`),
  );
  bridges.push(bridge);
  const worker = new TasksWorker(bridge);
  owner.worker = worker;
  return { worker, workers, apis };
}

const settled = () => new Promise<void>((r) => setTimeout(r, 0));
const request = { tasks: [], agents: [], samples: 1, seed: 1 };

afterEach(() => {
  for (const b of bridges) b.terminate();
  bridges = [];
});

describe('TasksWorker', () => {
  it('prepares the worker once and says its backend', async () => {
    const { worker, apis } = fixture();
    await expect(worker.init()).resolves.toBe('cpu');
    await expect(
      worker.tryProgram({ id: 't', level: 'easy', examples: [], hidden: [] }, 'x'),
    ).resolves.toEqual({
      rows: [],
      runError: null,
    });
    await worker.init();
    expect(apis[0]?.inits).toEqual([1]);
  });

  it('Stop ends the evaluation in flight with the reason given, and the next use gets a new worker', async () => {
    const { worker, workers, apis } = fixture();
    const reports: EvalProgress[] = [];
    const running = worker.evaluate(request, (p) => reports.push(p));
    while (reports.length === 0) await settled();
    worker.end('evaluation stopped', true);
    const err = await running.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkerEnded);
    expect(err).toMatchObject({ message: 'evaluation stopped', stopped: true });
    expect(workers[0]?.terminated).toBe(true);
    await expect(worker.init()).resolves.toBe('cpu');
    expect(apis).toHaveLength(2);
  });

  it('a crash ends the call in flight with the reason the owner gave', async () => {
    const { worker, workers } = fixture();
    const running = worker.evaluate(request, () => undefined);
    await settled();
    await settled();
    workers[0]?.crash('out of memory');
    await expect(running).rejects.toMatchObject({ message: 'crashed: out of memory', stopped: false });
  });

  it('a report of an ended evaluation does not reach the next one', async () => {
    const { worker, apis } = fixture();
    const first: EvalProgress[] = [];
    const stopped = worker.evaluate(request, (p) => first.push(p)).catch(() => 'stopped');
    await worker.init();
    worker.end('stop', true);
    await expect(stopped).resolves.toBe('stopped');
    const second: EvalProgress[] = [];
    const next = worker.evaluate(request, (p) => second.push(p));
    while (second.length === 0) await settled();
    apis[1]?.finish.resolve([]);
    await expect(next).resolves.toEqual([]);
    expect(first).toEqual([]);
    expect(second).toHaveLength(1);
  });

  it('an evaluation ended while the worker started does not start another worker', async () => {
    const { worker, apis } = fixture();
    const running = worker.evaluate(request, () => undefined);
    worker.end('evaluation stopped', true);
    await expect(running).rejects.toThrow('evaluation stopped');
    await settled();
    expect(apis).toHaveLength(1);
  });

  it('check fails a wait begun before the worker ended, and passes one begun after', () => {
    const { worker } = fixture();
    const before = worker.life;
    worker.check(before);
    worker.end('evaluation stopped', true);
    expect(() => worker.check(before)).toThrow('evaluation stopped');
    expect(() => worker.check(worker.life)).not.toThrow();
  });
});
