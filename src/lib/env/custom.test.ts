import * as tf from '@tensorflow/tfjs';
import type { QuickJSWASMModule } from 'quickjs-emscripten-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { CustomTrainer, randomReturn } from '../rl/custom-trainer';
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

  it('an MLP policy learns CartPole to a clearly better return than random actions', async () => {
    const env = envOf(CARTPOLE_JS);
    const random = randomReturn(env, 20, 1);
    const trainer = new CustomTrainer(env, {
      iterations: 25,
      episodesPerIteration: 8,
      hidden: 32,
      learningRate: 0.02,
      gamma: 0.99,
      valueCoef: 0.5,
      entropyCoef: 0.0,
      seed: 1,
    });
    const before = await trainer.evaluate(10, false);
    for (let i = 0; i < 25; i++) await trainer.step();
    const after = await trainer.evaluate(10, true);
    trainer.dispose();
    expect(random).toBeLessThan(40);
    expect(
      after,
      `random ${random.toFixed(1)}, untrained ${before.toFixed(1)}, trained ${after.toFixed(1)}`,
    ).toBeGreaterThan(2 * Math.max(random, before));
  }, 120_000);
});
