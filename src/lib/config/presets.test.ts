import { describe, expect, it } from 'vitest';
import { DEFAULT_ENV_CONFIG, TOOLUSE_ENV_CONFIG } from '../env/config';
import { kindOf } from '../env/suite';
import { builtInTasks } from '../env/task-kinds';
import { BUILT_IN_SEED, jobSourceOf } from '../run/pipeline';
import { DEFAULT_CODE_RUN } from './code-workload';
import { applyPreset, presetOf, PRESETS, switchTaskKind } from './presets';
import { runEvaluationTasks } from './run-tasks';
import { defaultRunConfig, pipelineConfigOf, validateRunConfig } from './run-config';

const preset = (id: string) => {
  const p = PRESETS.find((q) => q.id === id);
  if (!p) throw new Error(`no preset ${id}`);
  return p;
};

describe('teaching presets', () => {
  it('each sets its knobs, keeps the other settings, and gives settings a run accepts', () => {
    const base = { ...defaultRunConfig(), workers: 2, seed: 9, lora: { rank: 4, alpha: 8 } };
    for (const p of PRESETS) {
      const s = applyPreset(base, p);
      expect(() => validateRunConfig(s)).not.toThrow();
      expect(s.eta).toBe(p.knobs.eta);
      expect(s.loss).toBe(p.knobs.loss);
      expect(s.interruptEveryTokens).toBe(p.knobs.interruptEveryTokens);
      expect(s.task.curriculum.enabled).toBe(p.knobs.curriculum);
      expect(s.taskKind).toBe(p.knobs.taskKind);
      expect({ workers: s.workers, seed: s.seed, lora: s.lora }).toEqual({
        workers: 2,
        seed: 9,
        lora: { rank: 4, alpha: 8 },
      });
      expect(presetOf(s)?.id).toBe(p.id);
    }
    expect(base.eta).toBe(4); // the settings given are left as they were
  });

  it('are told apart by their knobs, and the defaults are the asynchronous one', () => {
    const knobs = PRESETS.map((p) => JSON.stringify(p.knobs));
    expect(new Set(knobs).size).toBe(PRESETS.length);
    expect(presetOf(defaultRunConfig())?.id).toBe('async');
    expect(presetOf({ ...defaultRunConfig(), eta: 2 })).toBeNull();
    // A run that held its staleness (a staleness-sweep leg) is not the synchronous preset; a preset clears the lag.
    const held = { ...defaultRunConfig(), eta: 0, playLag: 16 };
    expect(presetOf(held)).toBeNull();
    const synced = applyPreset(held, preset('sync'));
    expect([synced.eta, synced.playLag, presetOf(synced)?.id]).toEqual([0, 0, 'sync']);
    expect(() => validateRunConfig(applyPreset(held, preset('async')))).not.toThrow();
  });

  it('"Learn to use the sandbox" trains on tool-use tasks: their environment, their evaluation, no relabelling', () => {
    const s = applyPreset({ ...defaultRunConfig(), seed: 5 }, preset('tooluse'));
    expect(s.taskKind).toBe('tooluse');
    expect(s.env).toEqual(TOOLUSE_ENV_CONFIG);
    expect(pipelineConfigOf(s).env).toEqual(TOOLUSE_ENV_CONFIG); // what every rollout job plays with
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
    const evalTasks = runEvaluationTasks(s, builtInTasks(s.taskKind, BUILT_IN_SEED), 'easy');
    expect(evalTasks.some((t) => t.heldOut)).toBe(true);
    expect(evalTasks.every((t) => kindOf(t) === 'tooluse')).toBe(true);
    expect(presetOf(s)?.id).toBe('tooluse');
  });

  it('going back from tool use to another preset brings back the examples kind, its environment and hindsight', () => {
    const tool = applyPreset(defaultRunConfig(), preset('tooluse'));
    const back = applyPreset(tool, preset('sync'));
    expect(back.taskKind).toBe('examples');
    expect(back.env).toEqual(DEFAULT_ENV_CONFIG);
    expect(back.hindsight).toEqual(DEFAULT_CODE_RUN.hindsight);
    expect(presetOf(back)?.id).toBe('sync');
    // Between presets of the same kind, hindsight set by hand stays as it is.
    const byHand = {
      ...defaultRunConfig(),
      code: { ...defaultRunConfig().code, hindsight: { ...DEFAULT_CODE_RUN.hindsight, samplesPerBatch: 3 } },
    };
    expect(applyPreset(byHand, preset('sync')).hindsight.samplesPerBatch).toBe(3);
  });

  it('switching the task kind alone keeps the other knobs and round-trips the environment', () => {
    const base = { ...defaultRunConfig(), eta: 2, loss: 'ppo' as const };
    const tool = switchTaskKind(base, 'tooluse');
    expect([tool.taskKind, tool.eta, tool.loss]).toEqual(['tooluse', 2, 'ppo']);
    expect(tool.env.maxTurns).toBe(4);
    expect(tool.hindsight.samplesPerBatch).toBe(0);
    expect(switchTaskKind(tool, 'tooluse')).toBe(tool);
    const back = switchTaskKind(tool, 'examples');
    expect(back.env).toEqual(DEFAULT_ENV_CONFIG);
    expect(back.hindsight).toEqual(DEFAULT_CODE_RUN.hindsight);
  });
});
