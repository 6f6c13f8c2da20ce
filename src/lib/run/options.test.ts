import { describe, expect, it } from 'vitest';
import { defaultRunConfig, withOverrides } from '../config/run-config';
import { evaluates, evaluationLevel, settingsFor } from './options';

describe('run options', () => {
  const base = defaultRunConfig(2);

  it("override the panel's settings for one run", () => {
    const s = settingsFor(base, {
      config: {
        pipeline: { eta: 0 },
        learner: { learningRate: 0.01, groupSize: 2 },
        task: { level: 'hard' },
      },
    });
    expect(s.pipeline.eta).toBe(0);
    expect(s.learner.learningRate).toBe(0.01);
    expect(s.learner.groupSize).toBe(2);
    // The fields not set keep the panel's, in the same groups and elsewhere.
    expect(s.pipeline.workers).toBe(base.pipeline.workers);
    expect(s.learner.tasksPerBatch).toBe(base.learner.tasksPerBatch);
    expect(s.task.level).toBe('hard');
    expect(s.task.curriculum).toEqual(base.task.curriculum);
    expect(settingsFor(base, {})).toEqual(base);
    // The panel's config is left as it was.
    expect(base.pipeline.eta).toBe(defaultRunConfig(2).pipeline.eta);
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
    const withCurriculum = withOverrides(base, { task: { curriculum: { enabled: true } } });
    const without = withOverrides(base, { task: { curriculum: { enabled: false } } });
    expect(evaluationLevel(withOverrides(withCurriculum, { task: { level: 'medium' } }), null)).toBe(
      'medium',
    );
    expect(evaluationLevel(withCurriculum, null)).toBe('easy');
    expect(evaluationLevel(without, null)).toBe('all');
  });
});
