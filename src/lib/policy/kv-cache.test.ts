import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ENV_CONFIG } from '../env/config';
import { runEpisodes } from '../env/evaluate';
import { Episode } from '../env/episode';
import { generateTasks } from '../env/families';
import type { QuickJSSandbox } from '../sandbox/quickjs';
import { createNodeQuickJS } from '../sandbox/quickjs-node';
import { DEFAULT_MODEL_ARGS, type ModelArgs } from './config';
import { decodeStep, forward, initParams } from './model';
import { CachedPolicyAgent, DEFAULT_SAMPLER, PolicyAgent } from './sampler';

const plainArgs: ModelArgs = { ...DEFAULT_MODEL_ARGS, contextLength: 40, dModel: 16, nHeads: 2, dMlp: 32 };
/** The same model with the copy (pointer) head, whose keys and tokens are cached too. */
const copyArgs: ModelArgs = { ...plainArgs, pointerDim: 8 };
/** The same model with its vocabulary head tied to the token embedding. */
const tiedArgs: ModelArgs = { ...plainArgs, tieEmbeddings: true };

let sandbox: QuickJSSandbox;
beforeAll(async () => {
  await tf.setBackend('cpu');
  sandbox = await createNodeQuickJS();
});
afterAll(() => sandbox.dispose());

describe.each([
  ['vocabulary head', plainArgs],
  ['copy head', copyArgs],
  ['tied embeddings', tiedArgs],
])('KV cache (%s)', (_label, args) => {
  it('decoding token by token gives the logits of the full forward pass', () => {
    const params = initParams(args, 5);
    const seq = [1, 9, 20, 30, 6, 17, 12, 4];
    const full = tf.tidy(
      () => forward(params, args, tf.tensor2d([seq], [1, seq.length], 'int32')).logits.arraySync()[0],
    ); // [T][V]
    // Prefill the first 3 tokens, then decode the rest one at a time.
    const pre = forward(
      params,
      args,
      tf.tensor2d(
        [[...seq.slice(0, 3), ...Array(args.contextLength - 3).fill(0)]],
        [1, args.contextLength],
        'int32',
      ),
      true,
    );
    let cache = pre.kv;
    tf.dispose([pre.logits, pre.values]);
    for (let t = 3; t < seq.length; t++) {
      const tok = tf.tensor1d([seq[t] ?? 0], 'int32');
      const pos = tf.tensor1d([t], 'int32');
      const out = decodeStep(params, args, cache, tok, pos);
      cache = out.cache;
      const got = out.logits.arraySync()[0] ?? [];
      const want = full?.[t] ?? [];
      for (let v = 0; v < want.length; v++) expect(got[v]).toBeCloseTo(want[v] ?? NaN, 4);
      tf.dispose([tok, pos, out.logits, out.values]);
    }
    for (const c of cache) tf.dispose([c.k, c.v]);
    for (const v of params.values()) v.dispose();
  });

  it('cached and uncached agents write the same episodes with the same log-probs, and leak no tensors', async () => {
    const params = initParams(args, 7);
    const tasks = generateTasks(1).slice(0, 4);
    const env = { ...DEFAULT_ENV_CONFIG, contextLength: 40, maxTurns: 2, maxTokensPerTurn: 5 };
    const opts = { ...DEFAULT_SAMPLER, greedy: true, rows: 4 };
    const plain = new PolicyAgent('plain', params, args, opts);
    const cached = new CachedPolicyAgent('cached', params, args, opts);
    const logs: Record<string, number[][]> = { plain: [], cached: [] };
    const a = await runEpisodes(tasks, plain, sandbox, env, (_e, _t, lp) => logs.plain?.push([lp]));
    const before = tf.memory().numTensors;
    const b = await runEpisodes(tasks, cached, sandbox, env, (_e, _t, lp) => logs.cached?.push([lp]));
    expect(b.map((e) => e.tokens)).toEqual(a.map((e) => e.tokens));
    const la = (logs.plain ?? []).flat();
    const lb = (logs.cached ?? []).flat();
    expect(lb.length).toBe(la.length);
    lb.forEach((lp, i) => expect(lp).toBeCloseTo(la[i] ?? NaN, 4));
    // One prefill; afterwards one decode step per token, feedback tokens included.
    expect(cached.prefills).toBe(1);
    expect(cached.steps).toBeGreaterThan(0);
    cached.dispose();
    expect(tf.memory().numTensors).toBeLessThanOrEqual(before);

    // Weights adopted mid-episode: the cache is rebuilt from the current context and decoding
    // goes on (same weights here, so the episodes must not change).
    const adopting = new CachedPolicyAgent('adopting', params, args, opts);
    let calls = 0;
    const c = await runEpisodes(tasks, adopting, sandbox, env, () => {
      calls += 1;
      if (calls === 3) adopting.setParams(params);
    });
    expect(c.map((e) => e.tokens)).toEqual(a.map((e) => e.tokens));
    expect(adopting.prefills).toBe(2);
    adopting.dispose();
    for (const v of params.values()) v.dispose();
  }, 60_000);
});

/**
 * A cached and an uncached agent of one policy playing copies of the same six episodes in
 * lockstep: `play(ids)` makes both choose for those of `ids` still playing, checks that they
 * chose the same tokens with the same log-probs, and steps both copies.
 */
function lockstep(args: ModelArgs, seed: number) {
  const params = initParams(args, seed);
  const tasks = generateTasks(1).slice(0, 6);
  const env = { ...DEFAULT_ENV_CONFIG, contextLength: 40, maxTurns: 2, maxTokensPerTurn: 5 };
  const opts = { ...DEFAULT_SAMPLER, greedy: true, rows: 4 };
  const plain = new PolicyAgent('plain', params, args, opts);
  const cached = new CachedPolicyAgent('cached', params, args, opts);
  const mine = tasks.map((t) => new Episode(t, env));
  const theirs = tasks.map((t) => new Episode(t, env));
  const play = async (ids: number[]): Promise<void> => {
    const live = ids.filter((i) => !mine[i]?.done);
    const a = await plain.choose(live.map((i) => theirs[i] as Episode));
    const b = await cached.choose(live.map((i) => mine[i] as Episode));
    expect(b).toEqual(a);
    cached.lastLogProbs.forEach((lp, j) => expect(lp).toBeCloseTo(plain.lastLogProbs[j] ?? NaN, 4));
    for (const [j, i] of live.entries()) {
      await theirs[i]?.step(a[j] ?? 0, sandbox);
      await mine[i]?.step(b[j] ?? 0, sandbox);
    }
  };
  const dispose = () => {
    cached.dispose();
    for (const v of params.values()) v.dispose();
  };
  return { params, cached, mine, play, dispose };
}

describe('episodes that join a cached batch while others play (a new job on a busy worker)', () => {
  it.each([
    ['vocabulary head', plainArgs],
    ['copy head', copyArgs],
  ])(
    'are prefilled alone into free rows, and every episode gets the uncached policy’s tokens and log-probs (%s)',
    async (_label, args) => {
      const { cached, mine, play, dispose } = lockstep(args, 11);
      /** Which episodes play at each call: two, then two join, then the last two take the rows of those done. */
      const playing = (call: number) => {
        const live = (call < 3 ? [0, 1] : [0, 1, 2, 3]).filter((i) => !mine[i]?.done);
        for (const i of [4, 5]) if (live.length < 4 && call >= 3 && !mine[i]?.done) live.push(i);
        return live;
      };
      for (let call = 0; call < 200 && mine.some((e) => !e.done); call++) {
        const before = tf.memory().numTensors;
        await play(playing(call));
        if (call > 0) expect(tf.memory().numTensors).toBeLessThanOrEqual(before); // the cache is replaced, not grown
      }
      expect(mine.every((e) => e.done)).toBe(true);
      expect(cached.prefills).toBeGreaterThanOrEqual(3); // the first two, the two that joined, the last two
      dispose();
    },
    60_000,
  );
});

describe('a newcomer prefill that fails', () => {
  it('leaves no cache behind: the next call prefills every row and plays as the uncached policy', async () => {
    const { params, cached, mine, play, dispose } = lockstep(plainArgs, 13);
    for (let k = 0; k < 3; k++) await play([0, 1, 2, 3]);
    // 2 and 3 leave (aborted, say); 4 and 5 join into their rows, and that pass fails (a weight
    // gone missing). Had the rows been handed over anyway, 4 and 5 would decode on from 2's and
    // 3's positions and keys.
    const key = 'h0.attn.wqkv';
    const w = params.get(key) as tf.Variable;
    params.delete(key);
    await expect(cached.choose([0, 1, 4, 5].map((i) => mine[i] as Episode))).rejects.toThrow(
      /missing parameter/,
    );
    params.set(key, w);
    for (let k = 0; k < 4; k++) await play([0, 1, 4, 5]);
    dispose();
  }, 60_000);
});

describe('new weights with other model args', () => {
  it('are decoded with those args (a run stored by another build), as a fresh agent of those args would', async () => {
    const plain = initParams(plainArgs, 3);
    const copy = initParams(copyArgs, 4);
    const tasks = generateTasks(1).slice(0, 3);
    const env = { ...DEFAULT_ENV_CONFIG, contextLength: 40, maxTurns: 2, maxTokensPerTurn: 5 };
    const opts = { ...DEFAULT_SAMPLER, greedy: true, rows: 3 };
    const play = async (agent: CachedPolicyAgent) => {
      const logProbs: number[] = [];
      const eps = await runEpisodes(tasks, agent, sandbox, env, (_e, _t, lp) => logProbs.push(lp));
      agent.dispose();
      return { tokens: eps.map((e) => e.tokens), logProbs };
    };
    const switched = new CachedPolicyAgent('switched', plain, plainArgs, opts);
    switched.setParams(copy, copyArgs);
    const got = await play(switched);
    const want = await play(new CachedPolicyAgent('fresh', copy, copyArgs, opts));
    // The copy weights without their head (the args kept): another distribution.
    const headless = await play(new CachedPolicyAgent('headless', copy, plainArgs, opts));
    expect(got.tokens).toEqual(want.tokens);
    got.logProbs.forEach((lp, i) => expect(lp).toBeCloseTo(want.logProbs[i] ?? NaN, 4));
    expect(headless.logProbs.some((lp, i) => Math.abs(lp - (want.logProbs[i] ?? NaN)) > 1e-3)).toBe(true);
    tf.dispose([...plain.values(), ...copy.values()]);
  }, 60_000);
});
