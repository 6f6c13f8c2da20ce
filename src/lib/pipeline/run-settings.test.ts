import { describe, expect, it } from 'vitest';
import { CodeJobSource } from './code-workload';
import {
  defaultSettings,
  MAX_LORA_RANK,
  policyReset,
  settingsFromJson,
  settingsToJson,
  validateSettings,
} from './run-settings';

describe('run settings as stored JSON', () => {
  it('round-trips, unbounded η included', () => {
    const s = { ...defaultSettings(), eta: Infinity, workers: 2 };
    const back = settingsFromJson(JSON.parse(JSON.stringify(settingsToJson(s))) as Record<string, unknown>);
    expect(back).toEqual(s);
  });

  it('gives fields a stored run lacks their defaults, at every depth of the code config', () => {
    const base = defaultSettings();
    const stored = JSON.parse(JSON.stringify(settingsToJson(base))) as {
      code: {
        learningRate: number;
        hindsight: Record<string, unknown>;
        env: { limits: Record<string, unknown> };
      };
    };
    stored.code.learningRate = 0.001;
    delete stored.code.hindsight.taskFraction; // stored before the field existed
    stored.code.hindsight.samplesPerBatch = 8;
    delete stored.code.env.limits.deadlineMs; // two levels down
    const back0 = settingsFromJson(stored as unknown as Record<string, unknown>);
    expect(back0.code.env.limits).toEqual(base.code.env.limits);
    const back = settingsFromJson(stored as unknown as Record<string, unknown>);
    expect(back.code.learningRate).toBe(0.001);
    expect(back.code.hindsight.samplesPerBatch).toBe(8);
    expect(back.code.hindsight.taskFraction).toBe(base.code.hindsight.taskFraction);
    // The code config starts a job source (which validates hindsight) as it is.
    const task = { id: 't', level: 'easy' as const, examples: [], hidden: [] };
    expect(() => new CodeJobSource([task], back.code)).not.toThrow();
  });
});

describe('a run stored before the learning-rate schedule and the recency window', () => {
  it('resumes at a constant rate, counting every attempt, as it trained; a newer run keeps its own', () => {
    const old = JSON.parse(JSON.stringify(settingsToJson(defaultSettings()))) as {
      code: Record<string, unknown>;
    };
    delete old.code.lrHalfLife;
    delete old.code.valueWindow;
    const back = settingsFromJson(old as unknown as Record<string, unknown>);
    expect(back.code.lrHalfLife).toBe(0);
    expect(back.code.valueWindow).toBe(0);
    // Everything else still takes today's defaults.
    const { lrHalfLife, valueWindow } = defaultSettings().code;
    expect({ ...back.code, lrHalfLife, valueWindow }).toEqual(defaultSettings().code);
    const now = settingsToJson(defaultSettings());
    expect(settingsFromJson(now).code.lrHalfLife).toBe(lrHalfLife);
    expect(settingsFromJson(now).code.valueWindow).toBe(valueWindow);
  });
});

describe('settings validation', () => {
  it('refuses values a run cannot use, naming the field', () => {
    const bad = (patch: Record<string, unknown>) => () =>
      validateSettings({ ...defaultSettings(), ...patch } as ReturnType<typeof defaultSettings>);
    expect(bad({})).not.toThrow();
    expect(bad({ loss: 'pg' })).toThrow(/the policy loss must be one of "decoupled", "ppo", got "pg"/);
    expect(bad({ code: { ...defaultSettings().code, estimator: 'mc' } })).toThrow(/advantage estimator/);
    expect(bad({ replay: { ...defaultSettings().replay, mode: 'lifo' } })).toThrow(/replay mode/);
    expect(bad({ level: 'expert' })).toThrow(/the level must be one of null, "easy"/);
    expect(bad({ seed: 1.5 })).toThrow(/seed must be an integer/);
    expect(bad({ preemptAfterMs: -1 })).toThrow(/preemptAfterMs must be an integer ≥ 0/);
    expect(bad({ code: { ...defaultSettings().code, tasksPerBatch: 0 } })).toThrow(/tasksPerBatch/);
  });
});

describe('LoRA in the run settings', () => {
  it('is off by default, round-trips when on, and a run stored before it existed trains every parameter', () => {
    expect(defaultSettings().lora).toBeNull();
    const s = { ...defaultSettings(), lora: { rank: 4, alpha: 8 } };
    const back = settingsFromJson(JSON.parse(JSON.stringify(settingsToJson(s))) as Record<string, unknown>);
    expect(back.lora).toEqual({ rank: 4, alpha: 8 });
    expect(policyReset(back)).toEqual({
      seed: 1,
      loss: 'decoupled',
      learningRate: s.code.learningRate,
      lora: s.lora,
    });
    const old = settingsToJson(defaultSettings());
    delete old.lora;
    expect(settingsFromJson(old).lora).toBeNull();
  });

  it('refuses a rank or alpha it cannot train with, saying which', () => {
    const withLora = (rank: number, alpha: number) => () =>
      validateSettings({ ...defaultSettings(), lora: { rank, alpha } });
    expect(withLora(4, 8)).not.toThrow();
    expect(withLora(0, 8)).toThrow(/LoRA rank must be an integer from 1 to 16, got 0/);
    expect(withLora(2.5, 8)).toThrow(/LoRA rank/);
    expect(withLora(MAX_LORA_RANK + 1, 8)).toThrow(/LoRA rank/);
    expect(withLora(4, 0)).toThrow(/LoRA alpha must be a positive number, got 0/);
    expect(withLora(4, NaN)).toThrow(/LoRA alpha/);
  });
});

describe('starting from a stored run', () => {
  it('is off by default and refuses a start point it cannot read, saying why', () => {
    expect(defaultSettings().startFrom).toBeNull();
    const from = (runId: string, version: number) => () =>
      validateSettings({ ...defaultSettings(), startFrom: { runId, version } });
    expect(from('run-1', 3)).not.toThrow();
    expect(from('', 3)).toThrow(/no run named/);
    expect(from('run-1', -1)).toThrow(/non-negative integer, got -1/);
    expect(from('run-1', 1.5)).toThrow(/non-negative integer/);
  });
});

describe('the learning-rate schedule in the run settings', () => {
  it('accepts a constant rate or a half-life in versions, and nothing else', () => {
    const withHalfLife = (lrHalfLife: number) => () =>
      validateSettings({ ...defaultSettings(), code: { ...defaultSettings().code, lrHalfLife } });
    expect(withHalfLife(0)).not.toThrow();
    expect(withHalfLife(600)).not.toThrow();
    expect(withHalfLife(-1)).toThrow(/half-life must be 0 \(constant\) or a number of versions, got -1/);
    expect(withHalfLife(NaN)).toThrow(/half-life/);
    expect(withHalfLife(Infinity)).toThrow(/half-life/);
  });
});
