import { describe, expect, it } from 'vitest';
import { CachedSandbox, fnv1a, LruCache, testsKey } from './cache';
import type { Sandbox, SandboxRequest, SandboxResult } from './types';

class CountingSandbox implements Sandbox {
  readonly kind = 'quickjs' as const;
  calls = 0;
  constructor(private readonly result: (r: SandboxRequest) => SandboxResult) {}
  async run(r: SandboxRequest) {
    this.calls += 1;
    return this.result(r);
  }
  dispose() {}
}

describe('LruCache', () => {
  it('evicts the least recently used entry and counts hits and misses', () => {
    const c = new LruCache<number>(2);
    c.set('a', 1);
    c.set('b', 2);
    expect(c.get('a')).toBe(1); // a is now the most recent
    c.set('c', 3); // evicts b
    expect(c.get('b')).toBeUndefined();
    expect(c.get('c')).toBe(3);
    expect(c.stats).toMatchObject({ hits: 2, misses: 1, size: 2, capacity: 2 });
    expect(c.stats.hitRate).toBeCloseTo(2 / 3);
  });

  it('rejects a capacity that is not a positive integer', () => {
    expect(() => new LruCache(0)).toThrow(/positive integer/);
  });
});

describe('CachedSandbox', () => {
  const ok: SandboxResult = { ok: true, outputs: [1], stdout: '', ms: 3 };
  it('runs a (tests, program) pair once and serves repeats from the cache', async () => {
    const inner = new CountingSandbox(() => ok);
    const s = new CachedSandbox(inner, 8);
    await s.run({ code: 'const f = x => x', inputs: [1] });
    const again = await s.run({ code: 'const f = x => x', inputs: [1] });
    await s.run({ code: 'const f = x => x', inputs: [2] }); // other tests: a miss
    expect(inner.calls).toBe(2);
    expect(again.outputs).toEqual([1]);
    expect(again.cached).toBe(true);
    expect(s.cache.stats.hits).toBe(1);
  });

  it('does not cache timeouts or internal failures', async () => {
    const inner = new CountingSandbox(() => ({
      ok: false,
      stdout: '',
      error: { kind: 'timeout', message: 't' },
      ms: 50,
    }));
    const s = new CachedSandbox(inner, 8);
    await s.run({ code: 'x', inputs: [] });
    await s.run({ code: 'x', inputs: [] });
    expect(inner.calls).toBe(2);
  });

  it('keys on inputs and files, not only the program', () => {
    expect(testsKey({ inputs: [1] })).not.toBe(testsKey({ inputs: [2] }));
    expect(testsKey({ inputs: [1], files: { a: '1' } })).not.toBe(testsKey({ inputs: [1] }));
    expect(testsKey({ inputs: [-0] })).not.toBe(testsKey({ inputs: [0] }));
  });

  it('never gives one input set the result of another, even where a 32-bit hash of them collides', async () => {
    const inner = new CountingSandbox((req) => ({
      ok: true,
      stdout: '',
      outputs: (req.inputs as number[]).map((x) => 2 * x),
      ms: 1,
    }));
    const s = new CachedSandbox(inner, 8);
    const code = 'const f = (x) => 2 * x';
    // These two collide under FNV-1a 32 of their JSON, which keyed the cache before.
    expect(fnv1a(JSON.stringify([[553, 262], null, null]))).toBe(
      fnv1a(JSON.stringify([[787, 340], null, null])),
    );
    await s.run({ code, inputs: [553, 262] });
    const other = await s.run({ code, inputs: [787, 340] });
    expect(other.outputs).toEqual([1574, 680]);
    expect(other.cached).toBeUndefined();
    expect(inner.calls).toBe(2);
  });
});
