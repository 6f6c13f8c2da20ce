import * as tf from '@tensorflow/tfjs';
import type { QuickJSWASMModule } from 'quickjs-emscripten-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { Pipeline } from '../pipeline/controller';
import { playCustomGroup, type AdoptedPolicy } from './rollout';
import { customGroup, CustomJobSource, customPipelineConfig, type CustomTrajectory } from './workload';
import { DEFAULT_CUSTOM_TRAIN } from './config';
import { MlpLearner, randomReturn, snapshotReturn, type CustomBatch } from './trainer';
import { Rng } from '../random';
import { nodeQuickJSModule } from '../sandbox/quickjs-node';
import { QuickJSSession, SessionError } from './quickjs-session';
import { CARTPOLE_JS, CustomEnv } from './env';

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
    // Errors in the environment's own code say where they are.
    expect(() => envOf(COUNTER.replace('return [n]; }', 'return [n; }'))).toThrow(
      /^SyntaxError: .+ \(line 3, column \d+\)$/,
    );
    const thrower = envOf(COUNTER.replace('n += a;', 'n += a;\n  if (a) missing.x = 1;'));
    thrower.reset();
    expect(() => thrower.step(1)).toThrow(/missing.+ \(line 5, column \d+\)$/);
    const wrongObs = envOf(COUNTER.replace('return [n]; }', 'return [n, 1]; }'));
    expect(() => wrongObs.reset()).toThrow(/reset\(\) must be an array of 1 finite numbers/);
    const badReward = envOf(COUNTER.replace('reward: a', 'reward: "a"'));
    badReward.reset();
    expect(() => badReward.step(1)).toThrow(/reward must be a finite number/);
    const nanReward = envOf(COUNTER.replace('reward: a', 'reward: 0 / 0'));
    nanReward.reset();
    expect(() => nanReward.step(1)).toThrow(
      'step(1).reward must be a finite number of magnitude ≤ 1e9, got null (undefined, NaN and ±Infinity arrive as null)',
    );
    // Finite, but Infinity in the policy's 32-bit floats (and squared in its value loss).
    const hugeReward = envOf(COUNTER.replace('reward: a', 'reward: 1e39'));
    hugeReward.reset();
    expect(() => hugeReward.step(1)).toThrow(/reward must be a finite number of magnitude ≤ 1e9, got 1e\+39/);
    const hugeObs = envOf(COUNTER.replace('return [n]; }', 'return [1e300]; }'));
    expect(() => hugeObs.reset()).toThrow(/must be an array of 1 finite numbers of magnitude ≤ 1e9/);
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
      expect((err as SessionError).message).toMatch(/^step\(1\): /); // which call ran away
    }
  });

  it('stops an environment that keeps more memory than the limit over its calls', () => {
    // Each step keeps a filled array: QuickJS's own accounting misses it, the heap check does not.
    const env = envOf(
      COUNTER.replace('n += a;', 'n += a; keep.push(new Array(20000).fill(n));') + '\nconst keep = [];',
    );
    env.reset();
    let stopped: unknown = null;
    let calls = 0;
    try {
      for (; calls < 3000; calls++) env.step(0);
    } catch (err) {
      stopped = err;
    }
    expect(stopped).toBeInstanceOf(SessionError);
    expect((stopped as SessionError).kind).toBe('memory');
    expect(calls).toBeLessThan(3000);
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

  it('an MLP policy learns CartPole through the async pipeline, at η = 0 and with staleness at η = 1', async () => {
    const env = envOf(CARTPOLE_JS);
    const counted: number[] = [];
    const random = randomReturn(env, 20, 1, (done) => counted.push(done));
    expect(random).toBeLessThan(40);
    // The counter a panel shows moves after every episode.
    expect(counted).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    for (const eta of [0, 1]) {
      const r = await trainCustom(env, eta, 40);
      expect(r.versions).toBe(40);
      // η bounds the staleness of every trained group; at η = 1 the worker played ahead of the trainer.
      expect(Math.max(...r.staleness)).toBeLessThanOrEqual(eta);
      if (eta === 1) expect(r.staleness.filter((s) => s === 1).length).toBeGreaterThan(0);
      expect(
        r.after,
        `η ${eta}: random ${random.toFixed(1)}, untrained ${r.before.toFixed(1)}, trained ${r.after.toFixed(1)}`,
      ).toBeGreaterThan(2 * Math.max(random, r.before));
    }
  }, 240_000);

  it("stops training with the environment's own message when its code fails mid-training", async () => {
    // CartPole whose step() throws on its 300th call (a few episodes into training).
    const code = CARTPOLE_JS.replace(
      'function step(action) {',
      'let calls = 0;\nfunction step(action) {\n  if (++calls === 300) throw new Error("boom");',
    );
    const line = code.split('\n').findIndex((l) => l.includes('"boom"')) + 1;
    await expect(trainCustom(envOf(code), 1, 40)).rejects.toThrow(
      new RegExp(`^training stopped: step\\([01]\\): Error: boom \\(line ${line}, column \\d+\\)$`),
    );
  });
});

/**
 * Trains an MLP on `env` through the pipeline in process: one rollout port playing groups with
 * the adopted snapshot, a trainer port updating the learner and publishing the next version.
 */
async function trainCustom(env: CustomEnv, eta: number, versions: number) {
  const config = DEFAULT_CUSTOM_TRAIN;
  const learner = new MlpLearner({ inputs: 4, hidden: config.hidden, actions: 2 }, config);
  let adopted: AdoptedPolicy = { snapshot: await learner.snapshot(), version: 0 };
  const before = snapshotReturn(env, adopted.snapshot, 10, false, new Rng(2));
  const staleness: number[] = [];
  let resolve: () => void = () => undefined;
  let reject: (err: Error) => void = () => undefined;
  const done = new Promise<void>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  const pipeline: Pipeline<CustomBatch, CustomTrajectory> = new Pipeline(
    customPipelineConfig({ ...config, eta }),
    new CustomJobSource(4, config.gamma),
    {
      trainAndPublish: async (batch, info) => {
        const metrics = await learner.update(batch);
        adopted = { snapshot: await learner.snapshot(), version: info.fromVersion + 1 };
        return { version: adopted.version, metrics, startedAt: 0, publishedAt: 0 };
      },
    },
    'custom-test',
    {
      onStep: (r) => {
        staleness.push(...r.staleness);
        if (r.version >= versions) {
          pipeline.stop();
          resolve();
        }
      },
      onError: (m) => reject(new Error(m)),
    },
  );
  pipeline.addWorker(
    'w',
    {
      play: async (job) => {
        const played = await playCustomGroup(env, job.samples, () => adopted, new Rng(job.seed), {
          yieldEvery: config.yieldEvery,
          aborted: () => pipeline.isStopped,
        });
        return played
          ? customGroup(job.jobId, played, 0)
          : { ...customGroup(job.jobId, { trajectories: [], interrupted: 0 }, 0), status: 'aborted' };
      },
      abort: async () => undefined,
    },
    'rollout-0',
  );
  pipeline.start(0);
  await done;
  await pipeline.trainerIdle();
  const after = snapshotReturn(env, await learner.snapshot(), 10, true, new Rng(3));
  learner.dispose();
  return { versions: pipeline.version, staleness, before, after };
}
