import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { runContract } from './contract';
import { CONTRACT } from './corpus';
import { MIN_POLLS, interruptReason, type QuickJSSandbox } from './quickjs';
import { createNodeQuickJS } from './quickjs-node';
import { callLabel } from './types';

let sandbox: QuickJSSandbox;

beforeAll(async () => {
  sandbox = await createNodeQuickJS();
});
afterAll(() => sandbox.dispose());
afterEach(() => vi.restoreAllMocks());

/**
 * A fake `performance.now()` that moves 1 ms at every reading: a run's `ms` then counts the
 * sandbox's own clock checks (about one per 10 000 bytecode steps), not the machine's load.
 */
function steppingClock(): void {
  let t = 0;
  vi.spyOn(performance, 'now').mockImplementation(() => (t += 1));
}

describe('QuickJS sandbox contract (node)', () => {
  it.each(CONTRACT.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const [outcome] = await runContract(sandbox, [c]);
    expect(outcome?.problem).toBeNull();
  });

  it('stops an infinite loop close to its deadline', async () => {
    steppingClock();
    const r = await sandbox.run({
      code: 'const f = () => { for (;;) {} }',
      inputs: [0],
      limits: { deadlineMs: 30 },
    });
    expect(r.error?.kind).toBe('timeout');
    expect(r.error?.message).toBe('the program ran past its deadline (30 ms) and was stopped');
    expect(r.ms).toBeLessThan(30 + 100);
    // One deadline covers every input: the message says so.
    const many = await sandbox.run({
      code: 'const f = (x) => { for (let i = 0; i < 1e5; i++); return x; }',
      inputs: Array.from({ length: 2000 }, (_, i) => i),
      limits: { deadlineMs: 30 },
    });
    expect(many.error?.kind).toBe('timeout');
    expect(many.error?.message).toBe(
      'the program ran past its deadline (30 ms, one for all 2000 inputs together) and was stopped',
    );
  });

  it('stops a promise job that queues itself, and the next run is not slowed by what it left', async () => {
    // QuickJS goes on with the job queue after an interrupt inside a job: drained in one call,
    // this run never returned and hung its worker.
    steppingClock();
    const r = await sandbox.run({
      code: 'const f = (x) => { Promise.resolve().then(function g() { Promise.resolve().then(g); for (let i = 0; i < 1e4; i++); }); return x; }',
      inputs: [1],
      limits: { deadlineMs: 30 },
    });
    expect(r.error?.kind).toBe('timeout');
    expect(r.ms).toBeLessThan(30 * 4 + 500);
    const next = await sandbox.run({
      code: 'const f = (x) => x * 2',
      inputs: [3],
      limits: { deadlineMs: 30 },
    });
    expect(next).toMatchObject({ ok: true, outputs: [6] });
    expect(next.ms).toBeLessThan(30);
  });

  it('runs the promise jobs a program queues within its run', async () => {
    const r = await sandbox.run({
      code: 'let n = 0; const f = (x) => { Promise.resolve().then(() => { n += 1; console.log("job", n); }); return x; }',
      inputs: [1, 2],
    });
    expect(r).toMatchObject({ ok: true, outputs: [1, 2], stdout: 'job 1\njob 2' });
  });

  it('an output whose check runs past the deadline is a timeout, not an output error', async () => {
    const r = await sandbox.run({
      code: 'const f = () => ({ get a() { for (;;); } })',
      inputs: [0],
      limits: { deadlineMs: 30 },
    });
    expect(r.error?.kind).toBe('timeout');
  });

  it('the output check counts every character of the JSON it builds: nulls, commas and colons', async () => {
    // It counted only strings, numbers, keys and brackets: an array of a million nulls passed it
    // as two characters and was built whole, a timeout or memory error instead of an output error.
    const limits = { outputChars: 20 };
    for (const out of ['[null, null, null, null]', '({ ab: null, cd: null })']) {
      const r = await sandbox.run({ code: `const f = () => ${out}`, inputs: [0], limits });
      expect(r.error).toEqual({ kind: 'output', message: 'f(0) is over the 20-character limit' });
    }
    const fits = await sandbox.run({ code: 'const f = () => [null, 1]', inputs: [0], limits });
    expect(fits.outputs).toEqual([[null, 1]]);
  });

  it('names the failing call by its input: its value when short, its place otherwise', async () => {
    // It said "f(input 0)" for input 2: the place, which a reader takes for the input.
    const r = await sandbox.run({ code: 'const f = (x) => (x > 1 ? x / 0 : x)', inputs: [1, 2, 4] });
    expect(r.error).toEqual({ kind: 'output', message: 'f(2) is Infinity' });
    expect(callLabel('ab', 0)).toBe('f("ab")');
    expect(callLabel(null, 0)).toBe('f(null)');
    expect(callLabel([1, 2], 3)).toBe('f(input 3)');
    expect(callLabel('x'.repeat(40), 1)).toBe('f(input 1)');
  });

  it('returns what a failing program printed before it failed', async () => {
    const r = await sandbox.run({
      code: 'function f(x) { console.log("hi", x); if (x > 1) throw new Error("too big"); }',
      inputs: [1, 2],
    });
    expect(r.ok).toBe(false);
    expect(r.error?.kind).toBe('output'); // f(1) is undefined: not a JSON value
    expect(r.stdout).toBe('hi 1');
    const thrown = await sandbox.run({
      code: 'function f(x) { console.log("at", x); if (x > 1) throw new Error("too big"); return x; }',
      inputs: [1, 2],
    });
    expect(thrown.error?.kind).toBe('runtime');
    expect(thrown.error?.message).toMatch(/^Error: too big \(line 1, column \d+\)$/);
    expect(thrown.stdout).toBe('at 1\nat 2');
  });

  it('says where in the program a syntax or runtime error is', async () => {
    const syntax = await sandbox.run({
      code: '// line 1\nconst g = 1;\nconst f = (x) => {\n  return x +;\n};',
      inputs: [1],
    });
    expect(syntax.error).toEqual({
      kind: 'syntax',
      message: "SyntaxError: unexpected token in expression: ';' (line 4, column 13)",
    });
    const runtime = await sandbox.run({
      code: 'const f = (x) => {\n  const o = undefined;\n  return o.bar;\n};',
      inputs: [1],
    });
    expect(runtime.error).toEqual({
      kind: 'runtime',
      message: "TypeError: cannot read property 'bar' of undefined (line 3, column 11)",
    });
  });

  it('rejects a bad request without running it', async () => {
    const r = await sandbox.run({ code: 'const f = (x) => x', inputs: [0], limits: { deadlineMs: -1 } });
    expect(r.error).toEqual({
      kind: 'internal',
      message: expect.stringMatching(/deadlineMs must be a positive number/),
    });
  });
});

describe('interruptReason', () => {
  it('stops a run past its deadline once it has been computing', () => {
    expect(interruptReason(MIN_POLLS, 51, 50, 200, false)).toBe('deadline');
    expect(interruptReason(MIN_POLLS, 49, 50, 200, false)).toBeNull();
  });

  it('lets a run that barely computed (its thread was descheduled) go on, up to the hard cap', () => {
    expect(interruptReason(1, 86, 50, 200, false)).toBeNull();
    expect(interruptReason(1, 201, 50, 200, false)).toBe('deadline');
  });

  it('stops a run that grew the heap past the limit at once', () => {
    expect(interruptReason(1, 0, 50, 200, true)).toBe('memory');
  });
});
