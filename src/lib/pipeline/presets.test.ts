import { describe, expect, it } from 'vitest';
import { applyPreset, presetOf, PRESETS } from './presets';
import { defaultSettings, validateSettings } from './run-settings';

describe('teaching presets', () => {
  it('each sets its knobs, keeps the other settings, and gives settings a run accepts', () => {
    const base = { ...defaultSettings(), workers: 2, seed: 9, lora: { rank: 4, alpha: 8 } };
    for (const p of PRESETS) {
      const s = applyPreset(base, p);
      expect(() => validateSettings(s)).not.toThrow();
      expect(s.eta).toBe(p.knobs.eta);
      expect(s.loss).toBe(p.knobs.loss);
      expect(s.interruptEveryTokens).toBe(p.knobs.interruptEveryTokens);
      expect(s.code.curriculum.enabled).toBe(p.knobs.curriculum);
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
    expect(presetOf(defaultSettings())?.id).toBe('async');
    expect(presetOf({ ...defaultSettings(), eta: 2 })).toBeNull();
  });
});
