import { describe, expect, it } from 'vitest';
import { applyPreset, presetOf, PRESETS } from '../config/presets';
import { defaultRunConfig, withOverrides } from '../config/run-config';
import { TOOLUSE_ENV_CONFIG } from '../env/config';
import { kindOf } from '../env/suite';
import { builtInTasks } from '../env/task-kinds';
import { pipelineConfigOf } from '../pipeline/code-workload';
import { runEvaluationTasks } from '../pipeline/run-tasks';
import { BUILT_IN_SEED, jobSourceOf } from './pipeline';

const preset = (id: string) => {
  const p = PRESETS.find((q) => q.id === id);
  if (!p) throw new Error(`no preset ${id}`);
  return p;
};

describe('a run started from a preset', () => {
  it('"Learn to use the sandbox" trains on tool-use tasks: their environment, their evaluation, no relabelling', () => {
    const s = applyPreset(withOverrides(defaultRunConfig(), { seed: 5 }), preset('tooluse'));
    expect(s.task.kind).toBe('tooluse');
    expect(s.env).toEqual({ ...TOOLUSE_ENV_CONFIG, autoRun: true });
    expect(pipelineConfigOf(s).env).toEqual(s.env); // what every rollout job plays with
    // From the revising base, whose first program the environment runs; another preset drops that base.
    expect(s.policy.startFrom).toEqual({ base: 'tooluse-revise-copy' });
    expect(s.learner.learningRate).toBe(3e-4);
    // Another preset drops the base and what came with it.
    const back = applyPreset(s, preset('async'));
    expect([back.policy.startFrom, back.env.autoRun]).toEqual([null, false]);
    expect(back.learner.learningRate).toBe(defaultRunConfig().learner.learningRate);
    expect(applyPreset(back, preset('tooluse'))).toEqual(s);
    // Also when the base was set aside by hand first: the preset's knobs say what it set.
    const unbased = withOverrides(s, { policy: { startFrom: null } });
    expect(applyPreset(unbased, preset('async')).learner.learningRate).toBe(
      defaultRunConfig().learner.learningRate,
    );
    expect(s.hindsight.samplesPerBatch).toBe(0);
    expect(s.hindsight.taskFraction).toBe(0);
    expect(s.seed).toBe(5);
    // The job source of a run started with it poses tool-use tasks (one example shown, tests to run).
    const source = jobSourceOf(s, undefined);
    for (let i = 0; i < 20; i++) {
      const { task } = source.nextTask();
      expect(kindOf(task)).toBe('tooluse');
      expect(task.examples).toHaveLength(1);
      expect(task.tests?.length).toBeGreaterThan(0);
    }
    // Its evaluations score tool-use tasks, held-out and generalisation ones included.
    const evalTasks = runEvaluationTasks(s.task, builtInTasks(s.task.kind, BUILT_IN_SEED), 'easy');
    expect(evalTasks.some((t) => t.heldOut)).toBe(true);
    expect(evalTasks.every((t) => kindOf(t) === 'tooluse')).toBe(true);
    expect(presetOf(s)?.id).toBe('tooluse');
  });
});
