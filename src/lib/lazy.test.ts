import { describe, expect, it } from 'vitest';
import { lazyModule } from './lazy';

describe('lazyModule', () => {
  it('loads once, and shares that load between calls', async () => {
    let loads = 0;
    const load = lazyModule(() => Promise.resolve({ n: ++loads }));
    const [a, b] = await Promise.all([load(), load()]);
    expect(a).toBe(b);
    expect(await load()).toBe(a);
    expect(loads).toBe(1);
  });

  it('tries again after a load that failed', async () => {
    let loads = 0;
    const load = lazyModule(() =>
      ++loads === 1 ? Promise.reject(new Error('offline')) : Promise.resolve({ n: loads }),
    );
    await expect(load()).rejects.toThrow('offline');
    expect(await load()).toEqual({ n: 2 });
    expect(loads).toBe(2);
  });
});
