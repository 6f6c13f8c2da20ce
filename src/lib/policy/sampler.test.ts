import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playEpisodes } from '../env/evaluate';
import { generateTasks } from '../env/families';
import { DEFAULT_ENV_CONFIG } from '../env/config';
import { Rng } from '../random';
import type { QuickJSSandbox } from '../sandbox/quickjs';
import { createNodeQuickJS } from '../sandbox/quickjs-node';
import type { Episode } from '../env/episode';
import { DEFAULT_MODEL_ARGS, type ModelArgs } from './config';
import { initParams } from './model';
import { CachedPolicyAgent, DEFAULT_SAMPLER, PolicyAgent, pickMasked } from './sampler';

let sandbox: QuickJSSandbox;
beforeAll(async () => {
  await tf.setBackend('cpu');
  sandbox = await createNodeQuickJS();
});
afterAll(() => sandbox.dispose());

describe('masked sampling', () => {
  const logits = [2, 0, 1, 5];
  const mask = new Uint8Array([1, 1, 1, 0]);
  const lse = Math.log(Math.exp(2) + Math.exp(0) + Math.exp(1));

  it('greedy takes the best legal token, with its log-prob under the masked softmax', () => {
    const s = pickMasked(logits, mask, { greedy: true, temperature: 1 }, new Rng(1));
    expect(s.token).toBe(0);
    expect(s.logProb).toBeCloseTo(2 - lse, 6);
  });

  it('never samples a masked token, and samples in proportion to the probabilities', () => {
    const rng = new Rng(2);
    const counts = new Float64Array(4);
    for (let i = 0; i < 6000; i++) {
      const t = pickMasked(logits, mask, { greedy: false, temperature: 1 }, rng).token;
      counts[t] = (counts[t] ?? 0) + 1;
    }
    expect(counts[3]).toBe(0);
    expect((counts[0] ?? 0) / 6000).toBeCloseTo(Math.exp(2 - lse), 1);
    expect((counts[1] ?? 0) / 6000).toBeCloseTo(Math.exp(0 - lse), 1);
  });

  it('with a temperature, records the log-prob of the tempered distribution it sampled from (π_behav)', () => {
    const t = 2;
    const lseT = Math.log(Math.exp(2 / t) + Math.exp(0 / t) + Math.exp(1 / t));
    const rng = new Rng(3);
    const counts = new Float64Array(4);
    for (let i = 0; i < 6000; i++) {
      const s = pickMasked(logits, mask, { greedy: false, temperature: t }, rng);
      expect(s.logProb).toBeCloseTo((logits[s.token] ?? 0) / t - lseT, 6);
      counts[s.token] = (counts[s.token] ?? 0) + 1;
    }
    expect((counts[1] ?? 0) / 6000).toBeCloseTo(Math.exp(0 / t - lseT), 1);
  });

  it('throws when nothing is legal', () => {
    expect(() => pickMasked(logits, new Uint8Array(4), { greedy: true, temperature: 1 }, new Rng(1))).toThrow(
      /no legal/,
    );
  });
});

describe('logits that are not finite', () => {
  const mask = new Uint8Array([1, 1, 1, 0]);
  it.each([
    ['NaN', [NaN, 1, 2, 0]],
    ['+Infinity', [0, Infinity, 2, 0]],
    ['-Infinity', [0, 1, -Infinity, 0]],
  ])('a legal %s throws, sampled or greedy, instead of a token with a NaN log-prob', (_label, logits) => {
    for (const greedy of [false, true])
      expect(() => pickMasked(logits, mask, { greedy, temperature: 1 }, new Rng(1))).toThrow(
        /the policy's logits are not finite/,
      );
  });

  it('an illegal one is never read', () => {
    const s = pickMasked([2, 0, 1, NaN], mask, { greedy: false, temperature: 1 }, new Rng(3));
    expect(Number.isFinite(s.logProb)).toBe(true);
  });
});

describe('the cached agent past the context', () => {
  it('throws as prefill and the uncached agent do, instead of decoding at a clamped position', async () => {
    const args: ModelArgs = { ...DEFAULT_MODEL_ARGS, contextLength: 8, dModel: 16, nHeads: 2, dMlp: 32 };
    const params = initParams(args, 1);
    const tokens = [1, 2, 3, 4];
    const ep = { tokens, legalMask: () => new Uint8Array(args.vocabSize).fill(1) } as unknown as Episode;
    const opts = { ...DEFAULT_SAMPLER, rows: 1, greedy: true };
    const cached = new CachedPolicyAgent('cached', params, args, opts);
    await cached.choose([ep]); // prefill: 4 tokens of 8
    tokens.push(5, 6, 7, 8); // exactly the context: still decodes
    await cached.choose([ep]);
    expect(cached.steps).toBe(4);
    tokens.push(9, 10);
    const past = /episode of 10 tokens exceeds the policy's context 8/;
    await expect(cached.choose([ep])).rejects.toThrow(past);
    expect(cached.steps).toBe(4);
    await expect(new PolicyAgent('plain', params, args, opts).choose([ep])).rejects.toThrow(past);
    cached.invalidate();
    await expect(cached.choose([ep])).rejects.toThrow(past); // prefill
    cached.dispose();
    tf.dispose([...params.values()]);
  });
});

describe('the untrained policy as an agent', () => {
  it('plays legal episodes to the end; greedy play is deterministic', async () => {
    const params = initParams(DEFAULT_MODEL_ARGS, 3);
    const tasks = generateTasks(1).slice(0, 3);
    // Short episodes: the tfjs CPU backend in node takes ~0.2 s per forward pass.
    const config = { ...DEFAULT_ENV_CONFIG, maxTurns: 1, maxTokensPerTurn: 5 };
    const agent = () =>
      new PolicyAgent('untrained', params, DEFAULT_MODEL_ARGS, {
        greedy: true,
        temperature: 1,
        seed: 1,
        rows: 3,
      });
    const a = await playEpisodes(tasks, agent(), sandbox, { config });
    const b = await playEpisodes(tasks, agent(), sandbox, { config });
    expect(a).toEqual(b);
    expect(a.every((e) => e.turns === 1)).toBe(true);
    const sampler = new PolicyAgent('untrained', params, DEFAULT_MODEL_ARGS, {
      greedy: false,
      temperature: 1,
      seed: 1,
      rows: 3,
    });
    await playEpisodes(tasks, sampler, sandbox, { config });
    expect(sampler.lastLogProbs.every((lp) => lp <= 0 && Number.isFinite(lp))).toBe(true);
    for (const v of params.values()) v.dispose();
  });
});
