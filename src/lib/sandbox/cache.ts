import type { Sandbox, SandboxRequest, SandboxResult } from './types';

/** FNV-1a 32-bit hash of a string, as 8 hex digits. */
export function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

/**
 * Everything a run depends on besides the program text, as a string: inputs, files and limits,
 * whole (a hash of it let two input sets that collide share a result: `[553, 262]` and
 * `[787, 340]` under FNV-1a). −0 is kept apart from 0, which JSON would merge.
 */
export function testsKey(req: Omit<SandboxRequest, 'code'>): string {
  return JSON.stringify([req.inputs, req.files ?? null, req.limits ?? null], (_, v: unknown) =>
    Object.is(v, -0) ? { '-0': true } : v,
  );
}

/** Hit/miss counters of a result cache (DESIGN §6 metric). */
export interface CacheStats {
  hits: number;
  misses: number;
  hitRate: number;
  size: number;
  capacity: number;
}

/** A least-recently-used map with a fixed capacity. */
export class LruCache<V> {
  private readonly map = new Map<string, V>();
  hits = 0;
  misses = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new Error(`cache capacity must be a positive integer, got ${capacity}`);
  }

  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v === undefined) {
      this.misses += 1;
      return undefined;
    }
    this.hits += 1;
    this.map.delete(key);
    this.map.set(key, v);
    return v;
  }

  set(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.capacity) {
      const oldest = this.map.keys().next().value;
      if (oldest !== undefined) this.map.delete(oldest);
    }
  }

  get stats(): CacheStats {
    const total = this.hits + this.misses;
    return {
      hits: this.hits,
      misses: this.misses,
      hitRate: total ? this.hits / total : 0,
      size: this.map.size,
      capacity: this.capacity,
    };
  }
}

/**
 * A sandbox in front of which sits an LRU of results keyed by (tests, program text).
 * Timeouts and internal failures depend on load, not on the program, so they are not cached.
 */
export class CachedSandbox implements Sandbox {
  readonly cache: LruCache<SandboxResult>;

  constructor(
    private readonly inner: Sandbox,
    capacity = 4096,
  ) {
    this.cache = new LruCache(capacity);
  }

  get kind() {
    return this.inner.kind;
  }

  async run(request: SandboxRequest): Promise<SandboxResult> {
    const key = `${testsKey(request)}\u0000${request.code}`;
    const hit = this.cache.get(key);
    if (hit) return { ...hit, ms: 0, cached: true };
    const result = await this.inner.run(request);
    const kind = result.error?.kind;
    if (kind !== 'timeout' && kind !== 'internal') this.cache.set(key, result);
    return result;
  }

  dispose(): void {
    this.inner.dispose();
  }
}
