import * as tf from '@tensorflow/tfjs';
import type { QuickJSWASMModule } from 'quickjs-emscripten-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { CustomEnv } from './env';
import { initMlp, snapshotMlp } from '../policy/mlp';
import { Rng } from '../random';
import { nodeQuickJSModule } from '../sandbox/quickjs-node';
import { QuickJSSession } from './quickjs-session';
import { playCustomGroup, type AdoptedPolicy } from './rollout';
import { customGroup } from './workload';
import { readBeacon, useBeacon } from '../pipeline/beacon';

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

/** The ten-step environment and a small untrained policy for it. */
async function tenSteps() {
  const args = { inputs: 1, hidden: 4, actions: 2 };
  return {
    env: new CustomEnv(new QuickJSSession(module, TEN_STEPS)),
    snap: await snapshotMlp(initMlp(args, 1), args),
  };
}

describe('custom rollouts', () => {
  it('adopts a version pushed mid-episode at its next yield, stamps each step, and counts the interrupt', async () => {
    const { env, snap } = await tenSteps();
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
    const { env, snap } = await tenSteps();
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

  it('moves the worker’s progress counter with every step, between its yields too', async () => {
    const { env, snap } = await tenSteps();
    const counter = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
    useBeacon(counter);
    const seen: number[] = [];
    await playCustomGroup(env, 1, () => ({ snapshot: snap, version: 0 }), new Rng(1), {
      yieldEvery: 100, // never yields within the episode: the event loop does not turn
      aborted: () => false,
      pause: async () => undefined,
    });
    seen.push(readBeacon(counter));
    expect(seen).toEqual([10]);
  });
});
