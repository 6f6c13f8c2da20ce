import { describe, expect, it } from 'vitest';
import { defaultSettings } from './run-settings';
import { SHARE_PARAM, SHARE_URL_MAX, settingsFromShare, shareParam, shareUrl } from './share';

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

  it('refuse a link whose numbers are of the wrong type or out of range, naming the field and the value', () => {
    // A hand-made link carries only some fields; the rest take their defaults.
    const link = (o: unknown) =>
      btoa(JSON.stringify(o)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    const cases: [unknown, RegExp][] = [
      [{ code: { learningRate: 'abc' } }, /learningRate must be a positive number up to 1, got "abc"/],
      [{ code: { learningRate: -5 } }, /learningRate must be a positive number up to 1, got -5/],
      [{ code: { learningRate: 1e9 } }, /learningRate must be a positive number up to 1, got 1000000000/],
      [{ code: { updatesPerBatch: 0 } }, /updatesPerBatch must be an integer from 1 to 32, got 0/],
      [{ code: { updatesPerBatch: 1e9 } }, /updatesPerBatch must be an integer from 1 to 32, got 1000000000/],
      [{ code: { gamma: 'x' } }, /gamma \(the GAE discount\) must be a number from 0 to 1, got "x"/],
      [{ code: { env: { maxTurns: -5 } } }, /env maxTurns must be a positive integer, got -5/],
      [
        { code: { env: { reward: { pass: 'x' } } } },
        /reward weight pass must be a number from 0 to 100, got "x"/,
      ],
      [
        { code: { contextLength: 0 } },
        /contextLength \(the batch length\) must be an integer from 1 to 64, got 0/,
      ],
      [{ code: { env: { contextLength: 0 } } }, /env contextLength must be a positive integer, got 0/],
      [{ eta: '' }, /η must be 0 or more \(or unbounded\), got ""/],
      [{ eta: true }, /η must be 0 or more \(or unbounded\), got true/],
      [{ seed: 2 ** 53 }, /the seed must be an integer from 0 to 2147483647, got 9007199254740992/],
      [
        { replay: { betaDraws: 'y', epsilon: -1 } },
        /replay betaDraws must be an integer from 0 to 1000000, got "y"/,
      ],
      [{ replay: { epsilon: -1 } }, /replay epsilon must be a positive number up to 1, got -1/],
      [{ code: { reviewFraction: 5 } }, /reviewFraction must be a number from 0 to 1, got 5/],
    ];
    for (const [o, message] of cases) {
      expect(() => settingsFromShare(link(o)), JSON.stringify(o)).toThrow(
        /the share link's settings are not valid: /,
      );
      expect(() => settingsFromShare(link(o)), JSON.stringify(o)).toThrow(message);
    }
    // The same hand-made form with good values is read, the rest at their defaults.
    const ok = settingsFromShare(link({ seed: 42, code: { learningRate: 1e-3, env: { maxTurns: 2 } } }));
    expect(ok.seed).toBe(42);
    expect(ok.code.learningRate).toBe(1e-3);
    expect(ok.code.env.maxTurns).toBe(2);
    expect(ok.code.env.reward).toEqual(defaultSettings().code.env.reward);
  });

  it('refuse a link too long for a web server to accept, saying that the suite travels in it', () => {
    const task = (i: number) => ({
      id: `t${i}`,
      level: 'easy' as const,
      examples: [1, 2, 4].map((x) => ({ input: x, output: x + i })),
      hidden: [0, 3, 5].map((x) => ({ input: x, output: x + i })),
    });
    const withTasks = (n: number) => ({
      ...defaultSettings(),
      tasks: { name: 'mine', tasks: Array.from({ length: n }, (_, i) => task(i)) },
    });
    const small = shareUrl('https://lab.example/', withTasks(10));
    expect(small.length).toBeLessThanOrEqual(SHARE_URL_MAX);
    expect(settingsFromShare(new URL(small).searchParams.get(SHARE_PARAM) ?? '').tasks?.tasks).toHaveLength(
      10,
    );
    expect(() => shareUrl('https://lab.example/', withTasks(300))).toThrow(
      /the link would be [\d,]+ characters long, more than the 8,000 .*the 300 tasks of "mine" travel in it/,
    );
  });
});
