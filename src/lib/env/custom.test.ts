import * as tf from '@tensorflow/tfjs';
import type { QuickJSWASMModule } from 'quickjs-emscripten-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TimelineEvent } from '../pipeline/events';
import { SyncLoop } from '../pipeline/sync-loop';
import { CustomWorkload } from '../pipeline/custom-workload';
import type { MlpSnapshot } from '../policy/mlp';
import { DEFAULT_CUSTOM_TRAIN } from '../rl/custom-config';
import { collectCustomBatch, MlpLearner, randomReturn, snapshotReturn } from '../rl/custom-trainer';
import { Rng } from '../rl/random';
import { nodeQuickJSModule } from '../sandbox/quickjs-node';
import { QuickJSSession, SessionError } from '../sandbox/session';
import { CARTPOLE_JS, CustomEnv } from './custom';

let module: QuickJSWASMModule;
beforeAll(async () => {
  await tf.setBackend('cpu');
  module = await nodeQuickJSModule();
});

const envOf = (code: string) => new CustomEnv(new QuickJSSession(module, code));
const COUNTER = `const spec = { observations: 1, actions: 2, maxSteps: 5 };
let n = 0;
function reset() { n = 0; return [n]; }
function step(a) { n += a; return { observation: [n], reward: a, done: n >= 3 }; }`;

describe('custom JS environments', () => {
  it('keeps state between calls in its sandboxed context', () => {
    const env = envOf(COUNTER);
    expect(env.spec).toEqual({ observations: 1, actions: 2, maxSteps: 5 });
    expect(env.reset()).toEqual([0]);
    expect(env.step(1)).toEqual({ observation: [1], reward: 1, done: false });
    expect(env.step(0).observation).toEqual([1]);
    env.step(1);
    expect(env.step(1)).toEqual({ observation: [3], reward: 1, done: true });
    expect(env.reset()).toEqual([0]);
  });

  it('rejects a broken environment with a message that says what is wrong', () => {
    expect(() => envOf('function reset() {}')).toThrow(/must define `const spec/);
    expect(() =>
      envOf(
        'const spec = { observations: 1, actions: 1, maxSteps: 5 }; function reset(){} function step(){}',
      ),
    ).toThrow(/actions must be at least 2/);
    expect(() =>
      envOf('const spec = { observations: 1, actions: 2, maxSteps: 5 }; function reset(){}'),
    ).toThrow(/function step/);
    expect(() => envOf('const spec = {')).toThrow(SessionError);
    const wrongObs = envOf(COUNTER.replace('return [n]; }', 'return [n, 1]; }'));
    expect(() => wrongObs.reset()).toThrow(/reset\(\) must be an array of 1 finite numbers/);
    const badReward = envOf(COUNTER.replace('reward: a', 'reward: "a"'));
    badReward.reset();
    expect(() => badReward.step(1)).toThrow(/reward must be a finite number/);
    expect(() => badReward.step(2)).toThrow(/outside \[0, 2\)/);
  });

  it('stops a step that loops forever, as a timeout', () => {
    const env = envOf(COUNTER.replace('n += a;', 'while (a) {}'));
    env.reset();
    try {
      env.step(1);
      expect.unreachable('the step should have been stopped');
    } catch (err) {
      expect(err).toBeInstanceOf(SessionError);
      expect((err as SessionError).kind).toBe('timeout');
    }
  });

  it('has no host capabilities', () => {
    const env = envOf(
      `${COUNTER}\nconst probe = [typeof fetch, typeof require, typeof process, typeof globalThis.document, typeof console].join(',');`,
    );
    expect(
      new QuickJSSession(
        module,
        'const probe = [typeof fetch, typeof require, typeof process, typeof document].join(",")',
      ).call('probe'),
    ).toBe('undefined,undefined,undefined,undefined');
    expect(env.reset()).toEqual([0]);
  });

  it('an MLP policy learns CartPole through the sync loop to a clearly better return than random', async () => {
    const env = envOf(CARTPOLE_JS);
    const config = { ...DEFAULT_CUSTOM_TRAIN, episodesPerIteration: 8, learningRate: 0.02, entropyCoef: 0 };
    const learner = new MlpLearner({ inputs: 4, hidden: config.hidden, actions: 2 }, config);
    // The two sides of the loop, in process: the rollout plays with the adopted snapshot.
    const rng = new Rng(1);
    let adopted: MlpSnapshot | null = null;
    const versions: number[] = [];
    const events: TimelineEvent[] = [];
    const loop = new SyncLoop(
      new CustomWorkload(
        {
          collectCustom: async (n) =>
            collectCustomBatch(env, adopted ?? (await learner.snapshot()), n, config.gamma, rng),
          loadCustomPolicy: async (snap, v) => {
            adopted = snap;
            versions.push(v);
          },
        },
        { trainCustom: (b) => learner.update(b), exportCustomPolicy: () => learner.snapshot() },
        config.episodesPerIteration,
        config.gamma,
      ),
      (e) => events.push(e),
    );
    const random = randomReturn(env, 20, 1);
    const before = snapshotReturn(env, await learner.snapshot(), 10, false, rng);
    for (let i = 0; i < 25; i++) await loop.iterate();
    const after = snapshotReturn(env, await learner.snapshot(), 10, true, rng);
    learner.dispose();
    expect(versions).toEqual(Array.from({ length: 26 }, (_, i) => i));
    // The timeline's spans: per iteration a batch, then an update, then a publish, never overlapping.
    const lanes = events.map((e) => `${e.lane}:${e.kind}:${e.version}`);
    expect(lanes.slice(0, 4)).toEqual([
      'store:publish:0',
      'rollout-0:episode:0',
      'trainer:train-step:0',
      'store:publish:1',
    ]);
    expect(lanes).toHaveLength(1 + 3 * 25);
    expect(events.every((e, i) => e.t0 <= e.t1 && (i === 0 || (events[i - 1]?.t1 ?? Infinity) <= e.t0))).toBe(
      true,
    );
    expect(random).toBeLessThan(40);
    expect(
      after,
      `random ${random.toFixed(1)}, untrained ${before.toFixed(1)}, trained ${after.toFixed(1)}`,
    ).toBeGreaterThan(2 * Math.max(random, before));
  }, 120_000);
});
