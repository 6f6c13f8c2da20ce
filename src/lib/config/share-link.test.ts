import { describe, expect, it } from 'vitest';
import { builtInSuites } from '../env/families';
import { Rng } from '../random';
import { defaultRunConfig, runConfigToJson } from './run-config';
import { SHARE_PARAM, SHARE_URL_MAX, settingsFromShare, shareParam, shareUrl } from './share';

describe('share links', () => {
  it('carry the settings and seed through the URL, never a local "start from"', async () => {
    const s = {
      ...defaultRunConfig(),
      eta: Infinity,
      workers: 2,
      seed: 7,
      lora: { rank: 4, alpha: 8 },
      startFrom: { runId: 'run-here', version: 12 },
    };
    s.code = { ...s.code, estimator: 'grpo', lrHalfLife: 300 };
    const url = new URL(await shareUrl('https://lab.example/?backend=wasm#runs', s));
    expect(url.searchParams.get('backend')).toBe('wasm'); // other parameters kept
    expect(url.hash).toBe(''); // not the view it was made on: the link opens the first screen
    const param = url.searchParams.get(SHARE_PARAM) ?? '';
    expect(param).toMatch(/^z\.[A-Za-z0-9_-]+$/); // deflated, base64url: no escaping needed
    expect(await settingsFromShare(param)).toEqual({ ...s, startFrom: null });
    expect(await shareParam(s)).toBe(param);
    // A link of the older form (plain JSON as base64url) still opens.
    const plain = btoa(JSON.stringify(runConfigToJson({ ...s, startFrom: null })))
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, '');
    expect(await settingsFromShare(plain)).toEqual({ ...s, startFrom: null });
    // The built-in base ships with every copy of the page: it travels.
    const based = { ...s, startFrom: { base: 'easy-half' as const } };
    expect(await settingsFromShare(await shareParam(based))).toEqual(based);
    // A link whose start point is not an object opens from fresh weights.
    const odd = btoa(JSON.stringify({ ...runConfigToJson(s), startFrom: 'x' })).replace(/=+$/, '');
    expect((await settingsFromShare(odd)).startFrom).toBeNull();
  });

  it('refuse a cut, garbled or invalid link, saying what is wrong', async () => {
    const param = await shareParam(defaultRunConfig());
    await expect(settingsFromShare(param.slice(0, param.length / 2))).rejects.toThrow(
      /cannot be read.*cut short/,
    );
    await expect(settingsFromShare('not base64!')).rejects.toThrow(/not base64url/);
    await expect(settingsFromShare('z.not base64!')).rejects.toThrow(/not base64url/);
    const encode = (v: unknown) => shareParam(v as ReturnType<typeof defaultRunConfig>);
    await expect(settingsFromShare(btoa('[1,2]').replace(/=+$/, ''))).rejects.toThrow(/not an object/);
    await expect(settingsFromShare(await encode({ ...defaultRunConfig(), workers: 99 }))).rejects.toThrow(
      /not valid: rollout workers must be an integer from 1 to 8, got 99/,
    );
    await expect(settingsFromShare(await encode({ ...defaultRunConfig(), loss: 'magic' }))).rejects.toThrow(
      /the policy loss must be one of "decoupled", "ppo", got "magic"/,
    );
  });

  it('refuse a link whose numbers are of the wrong type or out of range, naming the field and the value', async () => {
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
      await expect(settingsFromShare(link(o)), JSON.stringify(o)).rejects.toThrow(
        /the share link's settings are not valid: /,
      );
      await expect(settingsFromShare(link(o)), JSON.stringify(o)).rejects.toThrow(message);
    }
    // The same hand-made form with good values is read, the rest at their defaults.
    const ok = await settingsFromShare(
      link({ seed: 42, code: { learningRate: 1e-3, env: { maxTurns: 2 } } }),
    );
    expect(ok.seed).toBe(42);
    expect(ok.learner.learningRate).toBe(1e-3);
    expect(ok.env.maxTurns).toBe(2);
    expect(ok.env.reward).toEqual(defaultRunConfig().env.reward);
  });

  it('deflate a suite of one’s own, and refuse a link too long for a web server to accept', async () => {
    const tasks = builtInSuites(1).train.tasks;
    const withTasks = (n: number) => ({
      ...defaultRunConfig(),
      tasks: { name: 'mine', tasks: tasks.slice(0, n) },
    });
    // 100 built-in-sized tasks: ~38 KB as plain JSON, well under the limit deflated.
    const hundred = await shareUrl('https://lab.example/', withTasks(100));
    expect(hundred.length).toBeLessThanOrEqual(SHARE_URL_MAX);
    const back = await settingsFromShare(new URL(hundred).searchParams.get(SHARE_PARAM) ?? '');
    expect(back.tasks?.tasks).toEqual(tasks.slice(0, 100));
    // Tasks that do not compress (outputs drawn at random) make a link too long: refused, saying why.
    const rng = new Rng(3);
    const noisy = Array.from({ length: 300 }, (_, i) => ({
      id: `t${i}`,
      level: 'easy' as const,
      examples: [1, 2, 4].map((x) => ({ input: x, output: rng.int(1_000_000) })),
      hidden: [0, 3, 5].map((x) => ({ input: x, output: rng.int(1_000_000) })),
    }));
    await expect(
      shareUrl('https://lab.example/', { ...defaultRunConfig(), tasks: { name: 'noisy', tasks: noisy } }),
    ).rejects.toThrow(
      /the link would be [\d,]+ characters long, more than the 8,000 .*the 300 tasks of "noisy" travel in it/,
    );
  });

  it('refuse a link that inflates past what any settings need', async () => {
    const bomb = new Uint8Array(
      await new Response(
        new Blob([' '.repeat(9_000_000)]).stream().pipeThrough(new CompressionStream('deflate-raw')),
      ).arrayBuffer(),
    );
    let binary = '';
    for (const b of bomb) binary += String.fromCharCode(b);
    const param = `z.${btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`;
    expect(param.length).toBeLessThan(20_000);
    await expect(settingsFromShare(param)).rejects.toThrow(
      /cannot be read \(it inflates to more than 8000000 bytes\)$/,
    );
  });
});
