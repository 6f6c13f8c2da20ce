import type { CustomEnv } from '../env/custom';
import type { Task } from '../env/suite';
import { mlpLogits, type MlpSnapshot } from '../policy/mlp';
import { pickMasked } from '../policy/sampler';
import type { CustomBatch } from '../rl/custom-trainer';
import type { Rng } from '../rl/random';
import type { JobSource } from './controller';
import { now } from './events';
import type { EpisodeOutcome, PlayedGroup } from './types';

/**
 * One episode of a custom JS environment as training data: per step the observation, the action,
 * its reward, and, as for a token trajectory, the behaviour log-prob and the version that chose it.
 */
export interface CustomTrajectory extends EpisodeOutcome {
  /** Observation before each step, [steps, I]. */
  obs: Float32Array;
  /** Action taken at each step, [steps]. */
  actions: Int32Array;
  /** Reward of each step, [steps]. */
  rewards: Float32Array;
  /** log π_behav of each action, [steps]. */
  logProbs: Float32Array;
  /** Version of the policy that chose each action, [steps]. */
  versions: Int32Array;
  /** When the episode adopted a newer version mid-way (an interrupted rollout), and which. */
  adoptions: { at: number; version: number }[];
}

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
 * meanwhile plays the rest of the episode (counted as an interrupt). Returns null when aborted.
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

/** A finished group of custom episodes as the pipeline takes it (nothing stored, nothing relabelled). */
export function customGroup(
  jobId: number,
  played: { trajectories: CustomTrajectory[]; interrupted: number },
  startedAt: number,
): PlayedGroup<CustomTrajectory> {
  let oldest = Infinity;
  let newest = -Infinity;
  for (const t of played.trajectories)
    for (const v of t.versions) {
      oldest = Math.min(oldest, v);
      newest = Math.max(newest, v);
    }
  return {
    jobId,
    status: 'done',
    trajectories: played.trajectories,
    relabelled: [],
    seqs: [],
    oldestVersion: Number.isFinite(oldest) ? oldest : -1,
    newestVersion: Number.isFinite(newest) ? newest : -1,
    interrupted: played.interrupted,
    startedAt,
    endedAt: now(),
  };
}

/**
 * The training batch of custom episodes: their steps in order, with discounted returns-to-go
 * and the behaviour log-probs the decoupled loss weighs them by.
 */
export function customBatch(
  trajectories: readonly CustomTrajectory[],
  inputs: number,
  gamma: number,
): CustomBatch {
  const N = trajectories.reduce((n, t) => n + t.actions.length, 0);
  const batch: CustomBatch = {
    steps: N,
    inputs,
    obs: new Float32Array(N * inputs),
    actions: new Int32Array(N),
    returns: new Float32Array(N),
    behavLogp: new Float32Array(N),
    episodeReturns: trajectories.map((t) => t.return),
  };
  let k = 0;
  for (const t of trajectories) {
    if (t.obs.length !== t.actions.length * inputs)
      throw new Error(
        `an episode has ${t.obs.length} observation values for ${t.actions.length} steps of ${inputs}`,
      );
    batch.obs.set(t.obs, k * inputs);
    batch.actions.set(t.actions, k);
    batch.behavLogp.set(t.logProbs, k);
    let acc = 0;
    for (let i = t.rewards.length - 1; i >= 0; i--) {
      acc = (t.rewards[i] ?? 0) + gamma * acc;
      batch.returns[k + i] = acc;
    }
    k += t.actions.length;
  }
  return batch;
}

/** The one "task" of a custom environment: play it. Jobs name it on the timeline. */
export const CUSTOM_TASK: Task = { id: 'custom-env', level: 'easy', examples: [], hidden: [] };

/**
 * A custom JS environment as the pipeline's work: every job is a group of episodes of the
 * environment, every batch their steps. The pipeline runs it FIFO (each group trained once), so
 * replay importance weights do not apply.
 */
export class CustomJobSource implements JobSource<CustomBatch, CustomTrajectory> {
  constructor(
    /** Observation length of the environment. */
    private readonly inputs: number,
    /** Discount of the returns-to-go. */
    private readonly gamma: number,
  ) {}

  nextTask(): ReturnType<JobSource['nextTask']> {
    return { task: CUSTOM_TASK, cls: 'normal', value: 0 };
  }

  record(): void {
    // No curriculum or per-task record: one environment.
  }

  batch(groups: readonly PlayedGroup<CustomTrajectory>[]): { batch: CustomBatch; priorities: number[] } {
    return {
      batch: customBatch(
        groups.flatMap((g) => g.trajectories),
        this.inputs,
        this.gamma,
      ),
      priorities: groups.map(() => 1),
    };
  }
}
