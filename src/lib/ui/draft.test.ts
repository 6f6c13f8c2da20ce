import { afterEach, describe, expect, it, vi } from 'vitest';
import { Draft } from './draft';

/** A localStorage that keeps items in a map, or throws on every write (`full`). */
function fakeStorage(full = false): Storage {
  const items = new Map<string, string>();
  return {
    get length() {
      return items.size;
    },
    clear: () => items.clear(),
    getItem: (k) => items.get(k) ?? null,
    key: (i) => [...items.keys()][i] ?? null,
    removeItem: (k) => void items.delete(k),
    setItem: (k, v) => {
      if (full) throw new DOMException('quota exceeded', 'QuotaExceededError');
      items.set(k, v);
    },
  };
}

afterEach(() => vi.unstubAllGlobals());

describe('Draft', () => {
  it('keeps what was written across a reload, per editor', () => {
    vi.stubGlobal('localStorage', fakeStorage());
    const a = new Draft('a');
    expect(a.load('default')).toBe('default');
    a.save('spec = {}');
    expect(new Draft('a').load('default')).toBe('spec = {}');
    expect(new Draft('b').load('other')).toBe('other');
  });

  it('works unsaved where storage is full or missing', () => {
    vi.stubGlobal('localStorage', fakeStorage(true));
    const a = new Draft('a');
    expect(() => a.save('x')).not.toThrow();
    expect(a.load('default')).toBe('default');
    vi.stubGlobal('localStorage', undefined);
    expect(() => a.save('x')).not.toThrow();
    expect(a.load('default')).toBe('default');
  });
});
