import { describe, expect, it } from 'vitest';
import { defaultSettings } from './run-settings';
import { SHARE_PARAM, settingsFromShare, shareParam, shareUrl } from './share';

describe('share links', () => {
  it('carry the settings and seed through the URL, never a local "start from"', () => {
    const s = {
      ...defaultSettings(),
      eta: Infinity,
      workers: 2,
      seed: 7,
      lora: { rank: 4, alpha: 8 },
      startFrom: { runId: 'run-here', version: 12 },
    };
    s.code = { ...s.code, estimator: 'grpo', lrHalfLife: 300 };
    const url = new URL(shareUrl('https://lab.example/?backend=wasm', s));
    expect(url.searchParams.get('backend')).toBe('wasm'); // other parameters kept
    const param = url.searchParams.get(SHARE_PARAM) ?? '';
    expect(param).toMatch(/^[A-Za-z0-9_-]+$/); // base64url: no escaping needed
    expect(settingsFromShare(param)).toEqual({ ...s, startFrom: null });
    expect(shareParam(s)).toBe(param);
  });

  it('refuse a cut, garbled or invalid link, saying what is wrong', () => {
    const param = shareParam(defaultSettings());
    expect(() => settingsFromShare(param.slice(0, param.length / 2))).toThrow(/cannot be read.*cut short/);
    expect(() => settingsFromShare('not base64!')).toThrow(/not base64url/);
    const encode = (v: unknown) => shareParam(v as ReturnType<typeof defaultSettings>);
    expect(() => settingsFromShare(btoa('[1,2]').replace(/=+$/, ''))).toThrow(/not an object/);
    expect(() => settingsFromShare(encode({ ...defaultSettings(), workers: 99 }))).toThrow(
      /not valid: rollout workers must be an integer from 1 to 8, got 99/,
    );
    expect(() => settingsFromShare(encode({ ...defaultSettings(), loss: 'magic' }))).toThrow(
      /the policy loss must be one of "decoupled", "ppo", got "magic"/,
    );
  });
});
