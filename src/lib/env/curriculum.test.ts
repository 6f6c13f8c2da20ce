import { describe, expect, it } from 'vitest';
import { Curriculum, DEFAULT_CURRICULUM, type CurriculumConfig } from './curriculum';
import type { Task } from './suite';

const task = (id: string, level: Task['level']): Task => ({ id, level, examples: [], hidden: [] });
const tasks = [task('a', 'easy'), task('b', 'medium'), task('c', 'hard')];
const ONE_OF_TWO: CurriculumConfig = { enabled: true, window: 2, promoteAt: 0.5 };

describe('curriculum', () => {
  it('starts easy and trains only on the current level', () => {
    const c = new Curriculum(DEFAULT_CURRICULUM, tasks);
    expect(c.level).toBe('easy');
    expect(c.tasksFor(tasks).map((t) => t.id)).toEqual(['a']);
  });

  it('with one task, promotes once a full window of 20 of its episodes reaches a success rate of 0.7', () => {
    const c = new Curriculum(DEFAULT_CURRICULUM, tasks);
    for (let i = 0; i < 7; i++) expect(c.record('a', 'easy', false)).toBeNull();
    for (let i = 0; i < 12; i++) expect(c.record('a', 'easy', true)).toBeNull(); // 12/20: the 20th not played yet
    expect(c.view()).toMatchObject({ level: 'easy', seen: 19, rate: 0.6, tasks: 1, tried: 1 });
    expect(c.record('a', 'easy', true)).toBeNull(); // 13/20 = 0.65 < 0.7
    expect(c.record('a', 'easy', true)).toBe('medium'); // the window slides past a failure: 14/20 = 0.7
    expect(c.view()).toMatchObject({
      level: 'medium',
      rate: null,
      seen: 0,
      tried: 0,
      promotions: [{ from: 'easy', to: 'medium', episode: 21 }],
    });
    expect(c.tasksFor(tasks).map((t) => t.id)).toEqual(['b']);
  });

  it('measures the level over every one of its tasks: a run of successes on a few does not promote', () => {
    const level = Array.from({ length: 10 }, (_, i) => task(`e${i}`, 'easy'));
    const c = new Curriculum({ enabled: true, window: 20, promoteAt: 0.7 }, [...level, task('m', 'medium')]);
    // 100 episodes in a row solved, all of 5 tasks (what the old window of the level's last 20
    // episodes promoted on): the other 5 tasks are not played yet, so the level is at 0.5.
    for (let k = 0; k < 5; k++)
      for (let i = 0; i < 20; i++) expect(c.record(`e${k}`, 'easy', true)).toBeNull();
    expect(c.view()).toMatchObject({ level: 'easy', rate: 0.5, seen: 100, tasks: 10, tried: 5 });
    // The other five at 8 of 20 each: (100 + 40) / 200 = 0.7.
    for (let k = 5; k < 9; k++)
      for (let i = 0; i < 20; i++) expect(c.record(`e${k}`, 'easy', i < 8)).toBeNull();
    for (let i = 0; i < 19; i++) expect(c.record('e9', 'easy', i < 7)).toBeNull(); // 139 / 200
    expect(c.record('e9', 'easy', true)).toBe('medium');
  });

  it('counts only the training tasks of the current level', () => {
    const c = new Curriculum({ ...ONE_OF_TWO, promoteAt: 1 }, tasks);
    expect(c.record('c', 'hard', true)).toBeNull();
    expect(c.record('hindsight:1,2', 'easy', true)).toBeNull(); // not a training task
    expect(c.view()).toMatchObject({ seen: 0, rate: null });
    c.record('a', 'easy', true);
    expect(c.view()).toMatchObject({ seen: 1, rate: 0.5 });
  });

  it('stops at hard', () => {
    const c = new Curriculum(ONE_OF_TWO, tasks);
    expect(c.record('a', 'easy', true)).toBe('medium');
    expect(c.record('b', 'medium', true)).toBe('hard');
    c.record('c', 'hard', true);
    expect(c.record('c', 'hard', true)).toBeNull();
    expect(c.level).toBe('hard');
    expect(c.view().rate).toBe(1);
  });

  it('walks only the levels its training tasks have (a suite of medium and hard tasks starts at medium)', () => {
    const c = new Curriculum(ONE_OF_TWO, [task('h', 'hard'), task('m1', 'medium'), task('m2', 'medium')]);
    expect(c.level).toBe('medium');
    expect(c.levelIndexNow).toBe(1);
    expect(c.tasksFor(tasks).map((t) => t.id)).toEqual(['b']);
    c.record('m1', 'medium', true);
    expect(c.record('m2', 'medium', true)).toBe('hard');
    const skips = new Curriculum({ enabled: true, window: 1, promoteAt: 0.5 }, [
      task('e', 'easy'),
      task('h', 'hard'),
    ]);
    expect(skips.record('e', 'easy', true)).toBe('hard'); // no medium task: medium is skipped
    expect(skips.view().promotions).toEqual([{ from: 'easy', to: 'hard', episode: 1 }]);
    expect(skips.record('h', 'hard', true)).toBeNull();
  });

  it('a resumed curriculum keeps the level, each task’s results and the promotions made before', () => {
    const all = [...tasks, task('b2', 'medium')];
    const c = new Curriculum(ONE_OF_TWO, all);
    c.record('a', 'easy', true);
    c.record('b', 'medium', true);
    c.record('b', 'medium', false);
    c.record('b', 'medium', false); // b: [false, false]
    c.record('b2', 'medium', true);
    const saved = JSON.parse(JSON.stringify(c.snapshot())) as ReturnType<Curriculum['snapshot']>;
    expect(saved.results).toEqual({ b: '00', b2: '1' });
    const resumed = new Curriculum(ONE_OF_TWO, all);
    resumed.restore(saved);
    expect(resumed.view()).toEqual(c.view());
    expect(resumed.view()).toMatchObject({ level: 'medium', rate: 0.25, seen: 3, tried: 2 });
    expect(resumed.record('b2', 'medium', true)).toBe('hard'); // (0 + 2) / 4 = 0.5
    expect(resumed.view().promotions.map((p) => p.to)).toEqual(['medium', 'hard']);
  });

  it('restores onto a level its tasks have; a stored window of an older build is read as nothing', () => {
    const c = new Curriculum(DEFAULT_CURRICULUM, [task('e', 'easy'), task('h', 'hard')]);
    c.restore({ levelIndex: 1, results: { e: '1', h: '1' }, episodes: 40 }); // medium: no task there
    expect(c.view()).toMatchObject({ level: 'hard', seen: 0 }); // counted on medium, not on hard
    const old = new Curriculum(DEFAULT_CURRICULUM, tasks);
    old.restore({ levelIndex: 1, recent: [true], episodes: 40 });
    expect(old.view()).toMatchObject({ level: 'medium', seen: 0, rate: null });
    const odd = new Curriculum({ ...DEFAULT_CURRICULUM, window: 3 }, [...tasks, task('a2', 'easy')]);
    odd.restore({ levelIndex: 0, results: { a: '0111', a2: '1x1', zz: '11' }, episodes: 3 });
    // a: its newest 3; a2: not a string of results; zz: no task of the level.
    expect(odd.view()).toMatchObject({ seen: 3, rate: 3 / 6, tried: 1 });
  });

  it('restores what a malformed stored snapshot holds with care', () => {
    const c = new Curriculum(DEFAULT_CURRICULUM, tasks);
    const junk = JSON.parse(
      '{"levelIndex": "x", "results": ["1"], "episodes": "x", "promotions": [{"from": "easy", "to": "medium", "episode": 4}, 3, {"from": "??"}]}',
    ) as ReturnType<Curriculum['snapshot']>;
    c.restore(junk);
    expect(c.view()).toMatchObject({
      level: 'easy',
      seen: 0,
      promotions: [{ from: 'easy', to: 'medium', episode: 4 }],
    });
    c.record('a', 'easy', true);
    expect(c.snapshot().episodes).toBe(1); // counted from 0, not appended to "x"
    const noList = new Curriculum(DEFAULT_CURRICULUM, tasks);
    noList.restore(
      JSON.parse('{"levelIndex": 2, "promotions": "none", "episodes": 9}') as ReturnType<
        Curriculum['snapshot']
      >,
    );
    expect(noList.view()).toMatchObject({ level: 'hard', promotions: [] });
  });

  it('keeps a task whose id is __proto__ like any other', () => {
    const c = new Curriculum({ ...ONE_OF_TWO, promoteAt: 1 }, [
      task('__proto__', 'easy'),
      task('b', 'medium'),
    ]);
    c.record('__proto__', 'easy', true);
    const saved = JSON.parse(JSON.stringify(c.snapshot())) as ReturnType<Curriculum['snapshot']>;
    const resumed = new Curriculum({ ...ONE_OF_TWO, promoteAt: 1 }, [
      task('__proto__', 'easy'),
      task('b', 'medium'),
    ]);
    resumed.restore(saved);
    expect(resumed.view()).toMatchObject({ seen: 1, rate: 0.5, tried: 1 });
  });

  it('ignores review episodes of an easier level once promoted', () => {
    const c = new Curriculum(ONE_OF_TWO, [task('a', 'easy'), task('b', 'medium'), task('c', 'hard')]);
    expect(c.record('a', 'easy', true)).toBe('medium');
    expect(c.record('a', 'easy', true)).toBeNull();
    expect(c.view()).toMatchObject({ level: 'medium', seen: 0, rate: null });
  });

  it('can be turned off: every level, no promotion', () => {
    const c = new Curriculum({ enabled: false, window: 1, promoteAt: 0.1 }, tasks);
    expect(c.tasksFor(tasks)).toHaveLength(3);
    expect(c.record('a', 'easy', true)).toBeNull();
    expect(c.level).toBe('easy');
  });

  it('rejects a bad config, and no training tasks', () => {
    expect(() => new Curriculum({ enabled: true, window: 0, promoteAt: 0.7 }, tasks)).toThrow(/window/);
    expect(() => new Curriculum({ enabled: true, window: 20, promoteAt: 1.5 }, tasks)).toThrow(/promoteAt/);
    expect(() => new Curriculum(DEFAULT_CURRICULUM, [])).toThrow(/training tasks/);
  });
});
