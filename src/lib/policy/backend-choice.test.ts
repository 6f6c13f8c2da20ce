import { describe, expect, it } from 'vitest';
import {
  MEASURE_PLAN,
  backendChoice,
  capFor,
  chooseBackend,
  choiceLabel,
  choiceTitle,
  passedOverReason,
  skippedTiming,
  timeSteps,
  timingOf,
  warmupAtLeast,
  type BackendTiming,
} from './backend-choice';

const timing = (t: Partial<BackendTiming> & Pick<BackendTiming, 'backend'>): BackendTiming => ({
  msPerStep: null,
  warmupMs: null,
  steps: 0,
  capMs: 1500,
  cutAfterMs: null,
  kernelCompileMs: null,
  warmupAtLeastMs: null,
  error: null,
  ...t,
});

describe('chooseBackend', () => {
  it('takes the fastest measured backend, whatever the preference order', () => {
    const wasm = timing({ backend: 'wasm', msPerStep: 54, warmupMs: 400, steps: 3 });
    expect(chooseBackend([wasm, timing({ backend: 'webgpu', msPerStep: 14, steps: 3 })])).toBe('webgpu');
    expect(chooseBackend([wasm, timing({ backend: 'webgpu', msPerStep: 2225, steps: 1 })])).toBe('wasm');
  });

  it('passes over a backend cut in its warm-up or that failed, and breaks ties by preference', () => {
    const cut = timing({ backend: 'webgpu', cutAfterMs: 2500 });
    const failed = timing({ backend: 'webgpu', error: 'loss is NaN' });
    const wasm = timing({ backend: 'wasm', msPerStep: 54, steps: 3 });
    expect(chooseBackend([wasm, cut])).toBe('wasm');
    expect(chooseBackend([failed, wasm])).toBe('wasm');
    expect(chooseBackend([cut, failed])).toBeNull();
    expect(chooseBackend([wasm, timing({ backend: 'webgpu', msPerStep: 54, steps: 3 })])).toBe('webgpu');
  });
});

describe('choiceLabel and reasons', () => {
  it('lists figures fastest first, then the backends with none', () => {
    expect(
      choiceLabel([
        timing({ backend: 'wasm', msPerStep: 54.4, steps: 3 }),
        timing({ backend: 'webgpu', msPerStep: 13.6, steps: 3 }),
      ]),
    ).toBe('webgpu 14 ms · wasm 54 ms / step');
    expect(
      choiceLabel([
        timing({ backend: 'cpu', error: 'boom' }),
        timing({ backend: 'webgpu', cutAfterMs: 2480.2 }),
        timing({ backend: 'wasm', msPerStep: 7.25, steps: 3 }),
      ]),
    ).toBe('wasm 7.3 ms / step · cpu failed · webgpu warm-up > 2480 ms');
  });

  it("says why a backend was passed over, with the chosen one's figure", () => {
    const wasm = timing({ backend: 'wasm', msPerStep: 54, steps: 3, warmupMs: 400 });
    const cut = timing({ backend: 'webgpu', cutAfterMs: 2500, capMs: 2500 });
    const late = timing({ backend: 'webgpu', cutAfterMs: 2721, capMs: 1631 });
    const choice = backendChoice([wasm, cut], 2950);
    expect(choice).toMatchObject({
      backend: 'wasm',
      label: 'wasm 54 ms / step · webgpu warm-up > 2500 ms',
      ms: 2950,
    });
    if (!choice) throw new Error('no choice');
    expect(passedOverReason(cut, choice)).toBe(
      'measured slower: its first training step (which compiles its kernels) had not finished after ' +
        '2500 ms (its cap: 2500 ms) against 54 ms on wasm, so it was stopped',
    );
    expect(passedOverReason(timing({ backend: 'webgpu', msPerStep: 2225, steps: 1 }), choice)).toBe(
      'measured slower: 2225 ms per training step against 54 ms on wasm',
    );
    const title = choiceTitle(choice);
    expect(title).toContain('wasm: 54 ms per step (median of 3, warm-up 400 ms)');
    expect(title).toContain('webgpu: warm-up step not finished after 2500 ms (cap 2500 ms), stopped');
    // A step that held the thread past the cap is cut when it yields: the reason says both.
    expect(passedOverReason(late, choice)).toContain('after 2721 ms (its cap: 1631 ms)');
    expect(choiceTitle(null)).toMatch(/^Not measured/);
    // A backend that compiles too slowly to warm up within its cap is not run at all.
    const slow = skippedTiming('webgpu', 2500, 120, warmupAtLeast(120, 37));
    const withSlow = backendChoice([wasm, slow], 900);
    if (!withSlow) throw new Error('no choice');
    expect(withSlow.label).toBe('wasm 54 ms / step · webgpu warm-up > 4440 ms');
    expect(passedOverReason(slow, withSlow)).toBe(
      'measured slower: compiling one of its kernels took 120 ms, so its first training step would take ' +
        'over 4440 ms (past its cap: 2500 ms) against 54 ms on wasm; it was not run',
    );
    expect(choiceTitle(withSlow)).toContain(
      'webgpu: 120 ms to compile a kernel, so over 4440 ms before a first step (cap 2500 ms): not run',
    );
    expect(backendChoice([cut], 2500)).toBeNull();
  });
});

describe('capFor', () => {
  it('shares what is left of the budget among the backends left, at least an even share each', () => {
    expect(capFor(MEASURE_PLAN, 0, 2)).toBe(1500);
    expect(capFor(MEASURE_PLAN, 500, 1)).toBe(2500);
    expect(capFor(MEASURE_PLAN, 2000, 1)).toBe(1500);
    expect(capFor(MEASURE_PLAN, 4000, 1)).toBe(1500);
  });
});

describe('timeSteps', () => {
  /** A clock that each step advances by the step's length. */
  function fakeSteps(lengths: number[]) {
    let now = 0;
    let i = 0;
    return {
      clock: () => now,
      step: async () => {
        now += lengths[i++] ?? 0;
      },
      calls: () => i,
    };
  }

  it('times a warm-up and the timed steps, and reports their median', async () => {
    const s = fakeSteps([400, 60, 50, 55]);
    const times = await timeSteps(s.step, {
      capMs: 1500,
      timedSteps: 3,
      abort: () => {},
      abortGraceMs: 10,
      clock: s.clock,
    });
    expect(times).toEqual({ warmupMs: 400, stepMs: [60, 50, 55], cutAfterMs: null, error: null });
    expect(timingOf('wasm', times, 1500)).toMatchObject({ msPerStep: 55, steps: 3, warmupMs: 400 });
  });

  it('takes one timed step after a warm-up that used the cap, and no more', async () => {
    const s = fakeSteps([1400, 200, 200, 200]);
    const times = await timeSteps(s.step, {
      capMs: 1500,
      timedSteps: 3,
      abort: () => {},
      abortGraceMs: 10,
      clock: s.clock,
    });
    expect(times.stepMs).toEqual([200]);
    expect(s.calls()).toBe(2);
  });

  it('aborts a backend whose warm-up outlasts the cap, and waits for its step to give up', async () => {
    let reject: (err: Error) => void = () => {};
    let aborted = false;
    let settled = false;
    const step = () =>
      new Promise<void>((_, rej) => {
        reject = (err) => {
          settled = true;
          rej(err);
        };
      });
    const times = await timeSteps(step, {
      capMs: 20,
      timedSteps: 3,
      abort: () => {
        aborted = true;
        reject(new Error('device destroyed'));
      },
      abortGraceMs: 1000,
    });
    expect(aborted).toBe(true);
    expect(settled).toBe(true);
    expect(times.warmupMs).toBeNull();
    expect(times.cutAfterMs).toBeGreaterThanOrEqual(15);
    expect(timingOf('webgpu', times, 20).msPerStep).toBeNull();
  });

  it('records a failing step as an error and gives no figure', async () => {
    let n = 0;
    const times = await timeSteps(
      async () => {
        if (++n === 3) throw new Error('loss is not finite');
      },
      { capMs: 1000, timedSteps: 3, abort: () => {}, abortGraceMs: 10 },
    );
    expect(times.error).toBe('loss is not finite');
    expect(timingOf('wasm', times, 1000)).toMatchObject({ msPerStep: null, error: 'loss is not finite' });
  });
});
