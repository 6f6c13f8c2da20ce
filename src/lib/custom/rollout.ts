import type { CustomEnv } from './env';
import { mlpLogits, type MlpSnapshot } from '../policy/mlp';
import { pickMasked } from '../policy/sampler';
import type { Rng } from '../random';
import { alive } from '../pipeline/beacon';
import type { CustomTrajectory } from './workload';
import { now } from '../pipeline/events';

// The rollout worker's side of a custom environment in the pipeline: playing a job's episodes.

/** The policy a custom rollout plays with: the newest version the worker adopted. */
export interface AdoptedPolicy {
  snapshot: MlpSnapshot;
  version: number;
}

/** How a group is played: how often it yields (to adopt a newer version), and whether it was aborted. */
export interface PlayOptions {
  /** Steps between yields; at each one a newer version pushed meanwhile is adopted. */
  yieldEvery: number;
  aborted(): boolean;
  /** Lets pending messages (a new version, an abort) arrive; a macrotask by default. */
  pause?(): Promise<void>;
}

const macrotask = () => new Promise<void>((r) => setTimeout(r, 0));

/**
 * Plays `samples` episodes of `env` with the newest adopted policy (sampled), stamping each step
 * with the version that chose it; every `yieldEvery` steps it yields, and a version adopted
 * meanwhile plays the rest of the episode (counted as an interrupt). Each step moves the worker's
 * progress counter (`beacon.ts`): a slow environment is not taken for a hung worker. Returns null
 * when aborted.
 */
export async function playCustomGroup(
  env: CustomEnv,
  samples: number,
  policy: () => AdoptedPolicy,
  rng: Rng,
  opts: PlayOptions,
): Promise<{ trajectories: CustomTrajectory[]; interrupted: number } | null> {
  const pause = opts.pause ?? macrotask;
  const { observations: I, actions: A, maxSteps } = env.spec;
  const legal = new Uint8Array(A).fill(1);
  const trajectories: CustomTrajectory[] = [];
  let interrupted = 0;
  let sinceYield = 0;
  for (let e = 0; e < samples; e++) {
    const obs: number[][] = [];
    const actions: number[] = [];
    const rewards: number[] = [];
    const logProbs: number[] = [];
    const versions: number[] = [];
    const adoptions: CustomTrajectory['adoptions'] = [];
    let o = env.reset();
    for (let i = 0; i < maxSteps; i++) {
      if (++sinceYield >= opts.yieldEvery) {
        sinceYield = 0;
        await pause();
        if (opts.aborted()) return null;
      }
      const p = policy();
      const last = versions.at(-1);
      if (last !== undefined && p.version !== last) adoptions.push({ at: now(), version: p.version });
      const { token: a, logProb } = pickMasked(
        mlpLogits(p.snapshot, o),
        legal,
        { greedy: false, temperature: 1 },
        rng,
      );
      const r = env.step(a);
      alive();
      obs.push(o);
      actions.push(a);
      rewards.push(r.reward);
      logProbs.push(logProb);
      versions.push(p.version);
      o = r.observation;
      if (r.done) break;
    }
    if (adoptions.length) interrupted += 1;
    const flat = new Float32Array(obs.length * I);
    obs.forEach((x, i) => flat.set(x, i * I));
    trajectories.push({
      obs: flat,
      actions: Int32Array.from(actions),
      rewards: Float32Array.from(rewards),
      logProbs: Float32Array.from(logProbs),
      versions: Int32Array.from(versions),
      adoptions,
      return: rewards.reduce((a, b) => a + b, 0),
      solved: false,
    });
  }
  return { trajectories, interrupted };
}
