import { describe, expect, it } from 'vitest';
import { Curriculum } from './curriculum';
import type { Task } from './suite';

const task = (id: string, level: Task['level']): Task => ({ id, level, examples: [], hidden: [] });
const tasks = [task('a', 'easy'), task('b', 'medium'), task('c', 'hard')];

describe('curriculum', () => {
  it('starts easy and trains only on the current level', () => {
    const c = new Curriculum();
    expect(c.level).toBe('easy');
    expect(c.tasksFor(tasks).map((t) => t.id)).toEqual(['a']);
  });

  it('promotes only once a full window of 20 reaches a success rate of 0.7', () => {
    const c = new Curriculum();
    for (let i = 0; i < 7; i++) expect(c.record('easy', false)).toBeNull();
    for (let i = 0; i < 12; i++) expect(c.record('easy', true)).toBeNull(); // 12/19: the window is not full
    expect(c.view()).toMatchObject({ level: 'easy', seen: 19 });
    expect(c.record('easy', true)).toBeNull(); // 13/20 = 0.65 < 0.7
    expect(c.record('easy', true)).toBe('medium'); // the window slides past a failure: 14/20 = 0.7
    expect(c.view()).toMatchObject({
      level: 'medium',
      rate: null,
      seen: 0,
      promotions: [{ from: 'easy', to: 'medium', episode: 21 }],
    });
    expect(c.tasksFor(tasks).map((t) => t.id)).toEqual(['b']);
  });

  it('ignores episodes of other levels and stops at hard', () => {
    const c = new Curriculum({ enabled: true, window: 2, promoteAt: 0.5 });
    expect(c.record('hard', true)).toBeNull();
    expect(c.view().seen).toBe(0);
    c.record('easy', true);
    expect(c.record('easy', true)).toBe('medium');
    c.record('medium', true);
    expect(c.record('medium', true)).toBe('hard');
    c.record('hard', true);
    expect(c.record('hard', true)).toBeNull();
    expect(c.level).toBe('hard');
  });

  it('walks only the levels its training tasks have (a suite of medium and hard tasks starts at medium)', () => {
    const c = new Curriculum({ enabled: true, window: 2, promoteAt: 0.5 }, ['hard', 'medium', 'medium']);
    expect(c.level).toBe('medium');
    expect(c.levelIndexNow).toBe(1);
    expect(c.tasksFor(tasks).map((t) => t.id)).toEqual(['b']);
    c.record('medium', true);
    expect(c.record('medium', true)).toBe('hard');
    const skips = new Curriculum({ enabled: true, window: 1, promoteAt: 0.5 }, ['easy', 'hard']);
    expect(skips.record('easy', true)).toBe('hard'); // no medium task: medium is skipped
    expect(skips.view().promotions).toEqual([{ from: 'easy', to: 'hard', episode: 1 }]);
    expect(skips.record('hard', true)).toBeNull();
  });

  it('restores onto a level its tasks have', () => {
    const c = new Curriculum(undefined, ['easy', 'hard']);
    c.restore({ levelIndex: 1, recent: [true], episodes: 40 }); // medium: no task there
    expect(c.level).toBe('hard');
    const all = new Curriculum();
    all.restore({ levelIndex: 1, recent: [true], episodes: 40 });
    expect(all.view()).toMatchObject({ level: 'medium', seen: 1 });
  });

  it('a resumed curriculum keeps the promotions made before', () => {
    const c = new Curriculum({ enabled: true, window: 2, promoteAt: 0.5 });
    c.record('easy', true);
    c.record('easy', true);
    const saved = JSON.parse(JSON.stringify(c.snapshot())) as ReturnType<Curriculum['snapshot']>;
    const resumed = new Curriculum({ enabled: true, window: 2, promoteAt: 0.5 });
    resumed.restore(saved);
    expect(resumed.view().promotions).toEqual([{ from: 'easy', to: 'medium', episode: 2 }]);
    expect(resumed.level).toBe('medium');
  });

  it('can be turned off: every level, no promotion', () => {
    const c = new Curriculum({ enabled: false, window: 1, promoteAt: 0.1 });
    expect(c.tasksFor(tasks)).toHaveLength(3);
    expect(c.record('easy', true)).toBeNull();
    expect(c.level).toBe('easy');
  });

  it('rejects a bad config', () => {
    expect(() => new Curriculum({ enabled: true, window: 0, promoteAt: 0.7 })).toThrow(/window/);
    expect(() => new Curriculum({ enabled: true, window: 20, promoteAt: 1.5 })).toThrow(/promoteAt/);
  });
});
