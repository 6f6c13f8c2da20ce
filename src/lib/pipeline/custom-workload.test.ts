import * as tf from '@tensorflow/tfjs';
import type { QuickJSWASMModule } from 'quickjs-emscripten-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { CustomEnv } from '../env/custom';
import { initMlp, snapshotMlp } from '../policy/mlp';
import { DEFAULT_CUSTOM_TRAIN } from '../rl/custom-config';
import { MlpLearner } from '../rl/custom-trainer';
import { Rng } from '../rl/random';
import { nodeQuickJSModule } from '../sandbox/quickjs-node';
import { QuickJSSession } from '../sandbox/session';
import {
  customBatch,
  customGroup,
  playCustomGroup,
  type AdoptedPolicy,
  type CustomTrajectory,
} from './custom-workload';

let module: QuickJSWASMModule;
beforeAll(async () => {
  await tf.setBackend('cpu');
  module = await nodeQuickJSModule();
});

/** Ten steps of reward 1 whatever the action; the observation counts the steps. */
const TEN_STEPS = `const spec = { observations: 1, actions: 2, maxSteps: 50 };
let n = 0;
function reset() { n = 0; return [n]; }
function step(a) { n += 1; return { observation: [n], reward: 1, done: n >= 10 }; }`;

const traj = (rewards: number[], logProbs: number[], inputs = 1): CustomTrajectory => ({
  obs: Float32Array.from(rewards.flatMap((_, i) => Array.from({ length: inputs }, () => i))),
  actions: Int32Array.from(rewards.map((_, i) => i % 2)),
  rewards: Float32Array.from(rewards),
  logProbs: Float32Array.from(logProbs),
  versions: Int32Array.from(rewards.map(() => 0)),
  adoptions: [],
  return: rewards.reduce((a, b) => a + b, 0),
  solved: false,
});

describe('custom environments in the pipeline', () => {
  it('batches episodes with discounted returns-to-go and their behaviour log-probs', () => {
    const b = customBatch([traj([1, 0, 2], [-0.1, -0.2, -0.3]), traj([5], [-0.7])], 1, 0.5);
    expect(b.steps).toBe(4);
    // G2 = 2, G1 = 0 + 0.5·2 = 1, G0 = 1 + 0.5·1 = 1.5; the second episode starts afresh.
    expect(Array.from(b.returns)).toEqual([1.5, 1, 2, 5]);
    expect(Array.from(b.behavLogp)).toEqual([-0.1, -0.2, -0.3, -0.7].map(Math.fround));
    expect(Array.from(b.actions)).toEqual([0, 1, 0, 0]);
    expect(b.episodeReturns).toEqual([3, 5]);
    expect(() => customBatch([traj([1, 1], [0, 0], 2)], 1, 0.9)).toThrow(
      /4 observation values for 2 steps of 1/,
    );
  });

  it('adopts a version pushed mid-episode at its next yield, stamps each step, and counts the interrupt', async () => {
    const env = new CustomEnv(new QuickJSSession(module, TEN_STEPS));
    const snap = await snapshotMlp(initMlp({ inputs: 1, hidden: 4, actions: 2 }, 1), {
      inputs: 1,
      hidden: 4,
      actions: 2,
    });
    let policy: AdoptedPolicy = { snapshot: snap, version: 3 };
    let pauses = 0;
    const played = await playCustomGroup(env, 2, () => policy, new Rng(1), {
      yieldEvery: 4,
      aborted: () => false,
      pause: async () => {
        pauses += 1;
        if (pauses === 1) policy = { snapshot: snap, version: 4 }; // arrives during the first episode
      },
    });
    expect(played).not.toBeNull();
    const [first, second] = played?.trajectories ?? [];
    expect(Array.from(first?.versions ?? [])).toEqual([3, 3, 3, 4, 4, 4, 4, 4, 4, 4]);
    expect(first?.adoptions.map((a) => a.version)).toEqual([4]);
    expect(Array.from(second?.versions ?? [])).toEqual(Array.from({ length: 10 }, () => 4));
    expect(played?.interrupted).toBe(1);
    expect(first?.return).toBe(10);
    // log π_behav of a sampled action of a 2-way softmax: a log-probability, not 0.
    expect(first?.logProbs.every((l) => l < 0 && l > Math.log(1e-6))).toBe(true);
    const group = customGroup(7, played ?? { trajectories: [], interrupted: 0 }, 0);
    expect([group.oldestVersion, group.newestVersion, group.status, group.jobId]).toEqual([3, 4, 'done', 7]);
  });

  it('stops at the next yield when aborted', async () => {
    const env = new CustomEnv(new QuickJSSession(module, TEN_STEPS));
    const snap = await snapshotMlp(initMlp({ inputs: 1, hidden: 4, actions: 2 }, 1), {
      inputs: 1,
      hidden: 4,
      actions: 2,
    });
    let stop = false;
    const played = await playCustomGroup(env, 3, () => ({ snapshot: snap, version: 0 }), new Rng(1), {
      yieldEvery: 5,
      aborted: () => stop,
      pause: async () => {
        stop = true;
      },
    });
    expect(played).toBeNull();
  });

  it('masks steps whose behaviour policy is too far from π_prox (w above the cap), as the decoupled loss does', async () => {
    const learner = new MlpLearner({ inputs: 1, hidden: 4, actions: 2 }, DEFAULT_CUSTOM_TRAIN);
    const snap = await learner.snapshot();
    const logp = (obs: number, a: number) => {
      const w = (i: number, j: number) => snap.w1[i * 4 + j] ?? 0;
      const h = [0, 1, 2, 3].map((j) => Math.tanh(obs * w(0, j) + (snap.b1[j] ?? 0)));
      const z = [0, 1].map((k) => h.reduce((s, x, j) => s + x * (snap.wp[j * 2 + k] ?? 0), snap.bp[k] ?? 0));
      const m = Math.max(...z);
      return (z[a] ?? 0) - m - Math.log(z.reduce((s, x) => s + Math.exp(x - m), 0));
    };
    // Behaviour = the current policy: w = 1 everywhere, nothing masked.
    const fresh = traj(
      [1, 1, 1, 1],
      [0, 1, 2, 3].map((i) => logp(i, i % 2)),
    );
    const on = await learner.update(customBatch([fresh], 1, 0.9));
    expect(on.wMean).toBeCloseTo(1, 4);
    expect(on.maskedFrac).toBe(0);
    expect(on.lossKind).toBe('decoupled');
    // Behaviour log-probs 3 nats below π_prox: w = e³ ≈ 20 > 5, every step masked, no policy loss.
    const snap2 = await learner.snapshot();
    Object.assign(snap, snap2);
    const stale = traj(
      [1, 1, 1, 1],
      [0, 1, 2, 3].map((i) => logp(i, i % 2) - 3),
    );
    const off = await learner.update(customBatch([stale], 1, 0.9));
    expect(off.wMean).toBeCloseTo(Math.exp(3), 2);
    expect(off.maskedFrac).toBe(1);
    expect(off.pgLoss).toBe(0);
    learner.dispose();
  });
});
