import { afterEach, describe, expect, it, vi } from 'vitest';
import { TabLocks } from './tab-locks';

/** Web Locks as the browser keeps them for all the tabs of an origin; `others` are another tab's. */
class FakeLockManager {
  readonly held = new Set<string>();
  constructor(readonly others: string[] = []) {}
  fails = false;
  async request<T>(
    name: string,
    _options: { ifAvailable: boolean },
    callback: (lock: { name: string } | null) => T,
  ): Promise<Awaited<T>> {
    if (this.fails) throw new DOMException('denied', 'SecurityError');
    if (this.others.includes(name) || this.held.has(name)) return await callback(null);
    this.held.add(name);
    try {
      return await callback({ name });
    } finally {
      this.held.delete(name);
    }
  }
  async query(): Promise<{ held: { name: string }[] }> {
    return { held: [...this.others, ...this.held].map((name) => ({ name })) };
  }
}

/** BroadcastChannels of one name reach every other channel of that name (not the sender). */
class FakeChannel {
  static open: FakeChannel[] = [];
  onmessage: ((e: { data: unknown }) => void) | null = null;
  constructor(readonly name: string) {
    FakeChannel.open.push(this);
  }
  postMessage(data: unknown): void {
    for (const c of FakeChannel.open) if (c !== this && c.name === this.name) c.onmessage?.({ data });
  }
}

afterEach(() => {
  vi.unstubAllGlobals();
  FakeChannel.open = [];
});

function withLocks(others: string[] = []): FakeLockManager {
  const locks = new FakeLockManager(others);
  vi.stubGlobal('navigator', { locks });
  vi.stubGlobal('BroadcastChannel', FakeChannel);
  return locks;
}

describe('TabLocks', () => {
  it('holds a free lock until its promise settles, and refuses one another tab holds', async () => {
    const manager = withLocks(['run-b']);
    const locks = new TabLocks();
    let done = () => {};
    const until = new Promise<void>((r) => (done = r));
    expect(await locks.hold('run-a', until)).toBe(true);
    expect(manager.held.has('run-a')).toBe(true);
    expect(await locks.hold('run-a', Promise.resolve())).toBe(false); // held already (by this tab)
    expect(await locks.hold('run-b', Promise.resolve())).toBe(false);
    // Its own locks are not "elsewhere"; the other tab's are.
    expect(await locks.heldElsewhere()).toEqual(['run-b']);
    done();
    await vi.waitFor(() => expect(manager.held.has('run-a')).toBe(false));
    expect(await locks.hold('run-a', Promise.reject(new Error('a failed run lets go too')))).toBe(true);
    await vi.waitFor(() => expect(manager.held.size).toBe(0));
  });

  it('refuses nothing and shows nothing held where the browser has no Web Locks, or a request fails', async () => {
    vi.stubGlobal('navigator', {});
    const none = new TabLocks();
    expect(await none.hold('run-a', Promise.resolve())).toBe(true);
    expect(await none.heldElsewhere()).toEqual([]);

    const manager = withLocks(['run-a']);
    manager.fails = true;
    expect(await new TabLocks().hold('run-a', Promise.resolve())).toBe(true);
  });

  it('tells the other tabs when it takes or lets go of a lock, on its channel only', async () => {
    withLocks();
    const here = new TabLocks('news');
    const there = new TabLocks('news');
    const elsewhere = new TabLocks('other-news');
    let heard = 0;
    let heardElsewhere = 0;
    there.onElsewhereChange(() => (heard += 1));
    elsewhere.onElsewhereChange(() => (heardElsewhere += 1));
    let done = () => {};
    expect(await here.hold('run-a', new Promise<void>((r) => (done = r)))).toBe(true);
    expect(heard).toBe(1); // taken
    done();
    await vi.waitFor(() => expect(heard).toBe(2)); // let go
    expect(heardElsewhere).toBe(0);
  });
});
