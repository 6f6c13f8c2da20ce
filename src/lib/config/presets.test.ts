import { describe, expect, it } from 'vitest';
import { DEFAULT_ENV_CONFIG } from '../env/config';
import { DEFAULT_HINDSIGHT } from '../rl/hindsight';
import { applyPreset, presetOf, PRESETS, STALENESS_LEGS, switchTaskKind } from './presets';
import { defaultRunConfig, validateRunConfig, withOverrides } from './run-config';

const preset = (id: string) => {
  const p = PRESETS.find((q) => q.id === id);
  if (!p) throw new Error(`no preset ${id}`);
  return p;
};

describe('teaching presets', () => {
  it('each sets its knobs, keeps the other settings, and gives settings a run accepts', () => {
    const base = withOverrides(defaultRunConfig(), {
      pipeline: { workers: 2 },
      seed: 9,
      policy: { lora: { rank: 4, alpha: 8 } },
    });
    for (const p of PRESETS) {
      const s = applyPreset(base, p);
      expect(() => validateRunConfig(s)).not.toThrow();
      expect(s.pipeline.eta).toBe(p.knobs.eta);
      expect(s.learner.loss).toBe(p.knobs.loss);
      expect(s.pipeline.interruptEveryTokens).toBe(p.knobs.interruptEveryTokens);
      expect(s.task.curriculum.enabled).toBe(p.knobs.curriculum);
      expect(s.task.kind).toBe(p.knobs.taskKind);
      expect({ workers: s.pipeline.workers, seed: s.seed, lora: s.policy.lora }).toEqual({
        workers: 2,
        seed: 9,
        lora: { rank: 4, alpha: 8 },
      });
      expect(presetOf(s)?.id).toBe(p.id);
    }
    expect(base.pipeline.eta).toBe(4); // the settings given are left as they were
  });

  it('are told apart by their knobs, and the defaults are the asynchronous one', () => {
    const knobs = PRESETS.map((p) => JSON.stringify(p.knobs));
    expect(new Set(knobs).size).toBe(PRESETS.length);
    expect(presetOf(defaultRunConfig())?.id).toBe('async');
    expect(presetOf(withOverrides(defaultRunConfig(), { pipeline: { eta: 2 } }))).toBeNull();
    // A run that held its staleness (a staleness-sweep leg) is not the synchronous preset; a preset clears the lag.
    const held = withOverrides(defaultRunConfig(), { pipeline: { eta: 0, playLag: 16 } });
    expect(presetOf(held)).toBeNull();
    const synced = applyPreset(held, preset('sync'));
    expect([synced.pipeline.eta, synced.pipeline.playLag, presetOf(synced)?.id]).toEqual([0, 0, 'sync']);
    expect(() => validateRunConfig(applyPreset(held, preset('async')))).not.toThrow();
  });

  it('going back from tool use to another preset brings back the examples kind, its environment and hindsight', () => {
    const tool = applyPreset(defaultRunConfig(), preset('tooluse'));
    const back = applyPreset(tool, preset('sync'));
    expect(back.task.kind).toBe('examples');
    expect(back.env).toEqual(DEFAULT_ENV_CONFIG);
    expect(back.hindsight).toEqual(DEFAULT_HINDSIGHT);
    expect(presetOf(back)?.id).toBe('sync');
    // Between presets of the same kind, hindsight set by hand stays as it is.
    const byHand = withOverrides(defaultRunConfig(), { hindsight: { samplesPerBatch: 3 } });
    expect(applyPreset(byHand, preset('sync')).hindsight.samplesPerBatch).toBe(3);
  });

  it('switching the task kind alone keeps the other knobs and round-trips the environment', () => {
    const base = withOverrides(defaultRunConfig(), { pipeline: { eta: 2 }, learner: { loss: 'ppo' } });
    const tool = switchTaskKind(base, 'tooluse');
    expect([tool.task.kind, tool.pipeline.eta, tool.learner.loss]).toEqual(['tooluse', 2, 'ppo']);
    expect(tool.env.maxTurns).toBe(4);
    expect(tool.hindsight.samplesPerBatch).toBe(0);
    expect(switchTaskKind(tool, 'tooluse')).toBe(tool);
    const back = switchTaskKind(tool, 'examples');
    expect(back.env).toEqual(DEFAULT_ENV_CONFIG);
    expect(back.hindsight).toEqual(DEFAULT_HINDSIGHT);
  });
});

describe('the staleness sweep’s legs', () => {
  it('set their own config over whatever the panel has, and a leg at the largest η is a run that validates', () => {
    // A panel far from the legs' setting: tool use, LoRA, a suite of one's own. (A panel that starts from a
    // stored run is left out: see 'replace a start point whole' in run-config.test.ts.)
    const suite = {
      name: 'mine',
      tasks: [
        {
          id: 'a',
          level: 'hard' as const,
          examples: [{ input: 1, output: 2 }],
          hidden: [{ input: 2, output: 3 }],
        },
      ],
    };
    const panel = withOverrides(switchTaskKind(defaultRunConfig(), 'tooluse'), {
      task: { suite },
      policy: { lora: { rank: 4, alpha: 8 } },
      learner: { updatesPerBatch: 1, tasksPerBatch: 8 },
      seed: 4,
    });
    const leg = withOverrides(withOverrides(panel, STALENESS_LEGS.config ?? {}), {
      pipeline: { eta: 0, playLag: 32 },
      task: { level: STALENESS_LEGS.level ?? null },
    });
    expect(() => validateRunConfig(leg)).not.toThrow();
    expect(leg.task.kind).toBe('examples');
    expect(leg.task.level).toBe('easy');
    expect(leg.task.suite).toBeNull(); // the built-in tasks
    expect(leg.env).toEqual(DEFAULT_ENV_CONFIG);
    expect(leg.policy.lora).toBeNull();
    expect(leg.policy.startFrom).toEqual({ base: 'easy-half' });
    expect(leg.learner).toMatchObject({ updatesPerBatch: 4, maxGradNorm: 1000, tasksPerBatch: 4 });
    expect(leg.hindsight).toEqual({ ...DEFAULT_HINDSIGHT, samplesPerBatch: 16 });
    expect(leg.storage.keepVersions).toBe(33);
    expect(leg.seed).toBe(4); // what the legs do not set stays the panel's
  });
});
