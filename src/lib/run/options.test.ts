import { describe, expect, it } from 'vitest';
import { defaultRunConfig } from '../config/run-config';
import { evaluates, evaluationLevel, settingsFor } from './options';

describe('run options', () => {
  const base = defaultRunConfig(2);

  it("override the panel's settings for one run", () => {
    const s = settingsFor(base, {
      settings: { eta: 0 },
      learningRate: 0.01,
      run: { groupSize: 2 },
      level: 'hard',
    });
    expect(s.eta).toBe(0);
    expect(s.learner.learningRate).toBe(0.01);
    expect(s.learner.groupSize).toBe(2);
    expect(s.learner.tasksPerBatch).toBe(base.learner.tasksPerBatch);
    expect(s.level).toBe('hard');
    expect(settingsFor(base, {})).toEqual(base);
  });

  it('evaluate every 10 versions by default, counted from the version a session started at', () => {
    expect(evaluates({}, 20, 0)).toBe(true);
    expect(evaluates({}, 20, 5)).toBe(false);
    expect(evaluates({}, 15, 5)).toBe(true);
    expect(evaluates({ evalEvery: 0 }, 0)).toBe(false);
    expect(evaluates({ evalEvery: 0 })).toBe(false);
    expect(evaluates({ evalEvery: 3 }, 6)).toBe(true);
  });

  it("score the run's level, the curriculum's, or all levels", () => {
    const withCurriculum = {
      ...base,
      code: { ...base.code, curriculum: { ...base.task.curriculum, enabled: true } },
    };
    const without = {
      ...base,
      code: { ...base.code, curriculum: { ...base.task.curriculum, enabled: false } },
    };
    expect(evaluationLevel({ level: 'medium' }, withCurriculum, null)).toBe('medium');
    expect(evaluationLevel({}, withCurriculum, null)).toBe('easy');
    expect(evaluationLevel({}, without, null)).toBe('all');
  });
});
