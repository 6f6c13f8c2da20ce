import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { deferred, FakeWorker } from '../bridge/fake-worker';
import { SANDBOX_ANSWER_MS } from '../bridge/sandbox-bridge';
import type { SandboxResult } from '../sandbox/types';
import { parseInputs, SandboxState } from './sandbox-state.svelte';

describe('parseInputs', () => {
  it('accepts a JSON array', () => {
    expect(parseInputs('[1, "a", [2]]')).toEqual([1, 'a', [2]]);
  });
  it('rejects JSON that is not an array, and text that is not JSON', () => {
    expect(() => parseInputs('{"a":1}')).toThrow(/must be a JSON array/);
    expect(() => parseInputs('[1,')).toThrow(/not valid JSON/);
  });
  it('rejects a number past the largest double, saying which input', () => {
    expect(() => parseInputs('[1e400]')).toThrow('input 0 is past the largest number');
    expect(() => parseInputs('[1, [2, -1e999]]')).toThrow('input 1[1] is past the largest number');
  });
});

/** The sandbox worker's answers, held back until a test gives them. */
const answers: { resolve: (r: SandboxResult) => void }[] = [];
const workers: FakeWorker[] = [];
class FakeSandboxWorker extends FakeWorker {
  constructor() {
    super({
      run: () => {
        const d = deferred<SandboxResult>();
        answers.push(d);
        return d.promise;
      },
      cacheStats: () => null,
    });
    workers.push(this);
  }
}

describe('SandboxState.run', () => {
  beforeEach(() => {
    vi.stubGlobal('Worker', FakeSandboxWorker);
    answers.length = 0;
    workers.length = 0;
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  /** A panel whose run has reached its (fake) worker. */
  async function running() {
    const state = new SandboxState();
    state.choice = 'quickjs';
    const run = state.run();
    while (answers.length === 0) await vi.advanceTimersByTimeAsync(0);
    return { state, run };
  }

  it('a worker that does not answer in time is stopped, and the next run gets a new one', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { state, run } = await running();
    await vi.advanceTimersByTimeAsync(SANDBOX_ANSWER_MS);
    await run;
    expect(state.error).toBe(
      'the sandbox worker did not answer in 15 s and was stopped; it restarts on the next run',
    );
    expect(state.running).toBe(false);
    expect(workers[0]?.terminated).toBe(true);
    const next = state.run();
    while (answers.length < 2) await vi.advanceTimersByTimeAsync(0);
    answers[1]?.resolve({ ok: true, outputs: [3], stdout: '', ms: 1 });
    await next;
    expect(state.error).toBeNull();
    expect(state.result?.outputs).toEqual([3]);
    state.bridge.terminate();
  });

  it('a worker that crashes during a run ends it with the crash', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { state, run } = await running();
    workers[0]?.crash('boom');
    await run;
    expect(state.error).toBe('sandbox worker crashed: boom; it restarts on the next run');
    expect(state.running).toBe(false);
    expect(state.bridge.state).toBe('stopped');
  });
});
