import { describe, expect, it } from 'vitest';
import { builtInSuites } from '../env/families';
import { Rng } from '../random';
import { defaultRunConfig, runConfigToJson, withOverrides, type RunConfig } from './run-config';
import { SHARE_PARAM, SHARE_URL_MAX, settingsFromShare, shareParam, shareUrl } from './share-link';

/** JSON as a share parameter of the older plain form (base64url, not deflated). */
const link = (o: unknown) =>
  btoa(JSON.stringify(o)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

describe('share links', () => {
  it('carry the settings and seed through the URL, never a local "start from"', async () => {
    const s = withOverrides(defaultRunConfig(), {
      pipeline: { eta: Infinity, workers: 2 },
      seed: 7,
      policy: { lora: { rank: 4, alpha: 8 }, startFrom: { runId: 'run-here', version: 12 } },
      learner: { estimator: 'grpo', lrHalfLife: 300 },
    });
    const local = withOverrides(s, { policy: { startFrom: null } });
    const url = new URL(await shareUrl('https://lab.example/?backend=wasm#runs', s));
    expect(url.searchParams.get('backend')).toBe('wasm'); // other parameters kept
    expect(url.hash).toBe(''); // not the view it was made on: the link opens the first screen
    const param = url.searchParams.get(SHARE_PARAM) ?? '';
    expect(param).toMatch(/^z\.[A-Za-z0-9_-]+$/); // deflated, base64url: no escaping needed
    expect(await settingsFromShare(param)).toEqual(local);
    expect(await shareParam(s)).toBe(param);
    // A link of the older form (plain JSON as base64url) still opens.
    expect(await settingsFromShare(link(runConfigToJson(local)))).toEqual(local);
    // The built-in base ships with every copy of the page: it travels.
    const based: RunConfig = { ...s, policy: { ...s.policy, startFrom: { base: 'easy-half' } } };
    expect(await settingsFromShare(await shareParam(based))).toEqual(based);
    // A link whose start point is not an object opens from fresh weights.
    const json = runConfigToJson(s) as { policy: Record<string, unknown> };
    const odd = link({ ...json, policy: { ...json.policy, startFrom: 'x' } });
    expect((await settingsFromShare(odd)).policy.startFrom).toBeNull();
  });

  it('refuse a cut, garbled or invalid link, saying what is wrong', async () => {
    const param = await shareParam(defaultRunConfig());
    await expect(settingsFromShare(param.slice(0, param.length / 2))).rejects.toThrow(
      /cannot be read.*cut short/,
    );
    await expect(settingsFromShare('not base64!')).rejects.toThrow(/not base64url/);
    await expect(settingsFromShare('z.not base64!')).rejects.toThrow(/not base64url/);
    const encode = (v: unknown) => shareParam(v as RunConfig);
    await expect(settingsFromShare(link([1, 2]))).rejects.toThrow(/not an object/);
    const base = runConfigToJson(defaultRunConfig()) as Record<string, Record<string, unknown>>;
    await expect(
      settingsFromShare(await encode({ ...base, pipeline: { ...base.pipeline, workers: 99 } })),
    ).rejects.toThrow(
      "the share link's settings are not valid: pipeline.workers must be an integer from 1 to 8, got 99",
    );
    await expect(
      settingsFromShare(await encode({ ...base, learner: { ...base.learner, loss: 'magic' } })),
    ).rejects.toThrow('learner.loss must be one of "decoupled", "ppo", got "magic"');
  });

  it('refuse a link whose numbers are of the wrong type or out of range, naming the field and the value', async () => {
    // A hand-made link carries only some fields; the rest take their defaults.
    const cases: [unknown, RegExp][] = [
      [
        { learner: { learningRate: 'abc' } },
        /learner\.learningRate must be a number above 0, at most 1, got "abc"/,
      ],
      [
        { learner: { learningRate: -5 } },
        /learner\.learningRate must be a number above 0, at most 1, got -5/,
      ],
      [{ learner: { learningRate: 1e9 } }, /learner\.learningRate .* got 1000000000/],
      [
        { learner: { updatesPerBatch: 0 } },
        /learner\.updatesPerBatch must be an integer from 1 to 32, got 0/,
      ],
      [{ learner: { updatesPerBatch: 1e9 } }, /learner\.updatesPerBatch .* got 1000000000/],
      [{ learner: { gamma: 'x' } }, /learner\.gamma must be a number from 0 to 1, got "x"/],
      [{ env: { maxTurns: -5 } }, /env\.maxTurns must be a positive integer, got -5/],
      [{ env: { reward: { pass: 'x' } } }, /reward weight pass must be a number from 0 to 100, got "x"/],
      [{ learner: { contextLength: 0 } }, /learner\.contextLength must be an integer from 1 to 64, got 0/],
      [{ env: { contextLength: 0 } }, /env\.contextLength must be a positive integer, got 0/],
      [{ pipeline: { eta: '' } }, /pipeline\.eta \(η\) must be an integer from 0 up, or unbounded, got ""/],
      [
        { pipeline: { eta: true } },
        /pipeline\.eta \(η\) must be an integer from 0 up, or unbounded, got true/,
      ],
      [{ seed: 2 ** 53 }, /seed must be an integer from 0 to 2147483647, got 9007199254740992/],
      [
        { replay: { betaDraws: 'y', epsilon: -1 } },
        /replay\.betaDraws must be an integer from 0 to 1000000, got "y"/,
      ],
      [{ replay: { epsilon: -1 } }, /replay\.epsilon must be a number above 0, at most 1, got -1/],
      [{ task: { reviewFraction: 5 } }, /task\.reviewFraction must be a number from 0 to 1, got 5/],
      // A hand-made link of the flat form from before the groups: the same checks, named by today's paths.
      [{ code: { learningRate: -5 } }, /learner\.learningRate must be a number above 0, at most 1, got -5/],
      [{ code: { env: { maxTurns: -5 } } }, /env\.maxTurns must be a positive integer, got -5/],
      [{ code: { reviewFraction: 5 } }, /task\.reviewFraction must be a number from 0 to 1, got 5/],
      [{ workers: 1, eta: '' }, /pipeline\.eta \(η\) must be an integer from 0 up, or unbounded, got ""/],
    ];
    for (const [o, message] of cases) {
      await expect(settingsFromShare(link(o)), JSON.stringify(o)).rejects.toThrow(
        /^the share link's settings are not valid: /,
      );
      await expect(settingsFromShare(link(o)), JSON.stringify(o)).rejects.toThrow(message);
    }
    // The same hand-made form with good values is read, the rest at their defaults.
    const ok = await settingsFromShare(
      link({ seed: 42, learner: { learningRate: 1e-3 }, env: { maxTurns: 2 } }),
    );
    expect(ok.seed).toBe(42);
    expect(ok.learner.learningRate).toBe(1e-3);
    expect(ok.env.maxTurns).toBe(2);
    expect(ok.env.reward).toEqual(defaultRunConfig().env.reward);
    expect(ok).toEqual(
      withOverrides(defaultRunConfig(), { seed: 42, learner: { learningRate: 1e-3 }, env: { maxTurns: 2 } }),
    );
    // And of the flat form.
    const flat = await settingsFromShare(
      link({ seed: 42, code: { learningRate: 1e-3, env: { maxTurns: 2 } } }),
    );
    expect([flat.seed, flat.learner.learningRate, flat.env.maxTurns]).toEqual([42, 1e-3, 2]);
    expect(flat.env.reward).toEqual(defaultRunConfig().env.reward);
  });

  it('deflate a suite of one’s own, and refuse a link too long for a web server to accept', async () => {
    const tasks = builtInSuites(1).train.tasks;
    const withTasks = (n: number) =>
      withOverrides(defaultRunConfig(), { task: { suite: { name: 'mine', tasks: tasks.slice(0, n) } } });
    // 100 built-in-sized tasks: ~38 KB as plain JSON, well under the limit deflated.
    const hundred = await shareUrl('https://lab.example/', withTasks(100));
    expect(hundred.length).toBeLessThanOrEqual(SHARE_URL_MAX);
    const back = await settingsFromShare(new URL(hundred).searchParams.get(SHARE_PARAM) ?? '');
    expect(back.task.suite?.tasks).toEqual(tasks.slice(0, 100));
    // Tasks that do not compress (outputs drawn at random) make a link too long: refused, saying why.
    const rng = new Rng(3);
    const noisy = Array.from({ length: 300 }, (_, i) => ({
      id: `t${i}`,
      level: 'easy' as const,
      examples: [1, 2, 4].map((x) => ({ input: x, output: rng.int(1_000_000) })),
      hidden: [0, 3, 5].map((x) => ({ input: x, output: rng.int(1_000_000) })),
    }));
    await expect(
      shareUrl(
        'https://lab.example/',
        withOverrides(defaultRunConfig(), { task: { suite: { name: 'noisy', tasks: noisy } } }),
      ),
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
