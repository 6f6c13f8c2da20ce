import * as tf from '@tensorflow/tfjs';
import type { CustomEnv } from '../env/custom';
import { initMlp, mlpForward, mlpLogits, snapshotMlp, type MlpArgs, type MlpSnapshot } from '../policy/mlp';
import type { Params } from '../policy/model';
import { pickMasked } from '../policy/sampler';
import type { CustomTrainConfig } from './custom-config';
import { Rng } from './random';

/** One episode of a custom environment. */
interface Episode {
  obs: number[][];
  actions: number[];
  rewards: number[];
}

/** Plays one episode with `act`; the environment's own `maxSteps` bounds it. */
export function playCustom(env: CustomEnv, act: (obs: readonly number[]) => number): Episode {
  const t: Episode = { obs: [], actions: [], rewards: [] };
  let obs = env.reset();
  for (let i = 0; i < env.spec.maxSteps; i++) {
    const a = act(obs);
    const r = env.step(a);
    t.obs.push(obs);
    t.actions.push(a);
    t.rewards.push(r.reward);
    obs = r.observation;
    if (r.done) break;
  }
  return t;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** Mean return of `episodes` episodes of uniformly random actions: the baseline. */
export function randomReturn(env: CustomEnv, episodes: number, seed: number): number {
  const rng = new Rng(seed);
  const play = () => sum(playCustom(env, () => rng.int(env.spec.actions)).rewards);
  return sum(Array.from({ length: episodes }, play)) / episodes;
}

/** The action an MLP snapshot picks: sampled from its softmax, or greedy. */
export function mlpAct(snap: MlpSnapshot, obs: readonly number[], greedy: boolean, rng: Rng): number {
  const logits = mlpLogits(snap, obs);
  return pickMasked(logits, new Uint8Array(logits.length).fill(1), { greedy, temperature: 1 }, rng).token;
}

/** Mean return of `episodes` episodes played by a snapshot. */
export function snapshotReturn(
  env: CustomEnv,
  snap: MlpSnapshot,
  episodes: number,
  greedy: boolean,
  rng: Rng,
): number {
  const play = () => sum(playCustom(env, (o) => mlpAct(snap, o, greedy, rng)).rewards);
  return sum(Array.from({ length: episodes }, play)) / episodes;
}

/** A batch of custom-env steps as flat arrays (they cross threads as transferables). */
export interface CustomBatch {
  /** Steps (N). */
  steps: number;
  /** Observation length (I). */
  inputs: number;
  /** Observations, [N, I]. */
  obs: Float32Array;
  /** Actions taken, [N]. */
  actions: Int32Array;
  /** Discounted returns-to-go, [N]. */
  returns: Float32Array;
  /** Return of each episode of the batch. */
  episodeReturns: number[];
}

/** Rollout side: plays `episodes` episodes with a snapshot (sampled) and returns the batch. */
export function collectCustomBatch(
  env: CustomEnv,
  snap: MlpSnapshot,
  episodes: number,
  gamma: number,
  rng: Rng,
): CustomBatch {
  const eps = Array.from({ length: episodes }, () => playCustom(env, (o) => mlpAct(snap, o, false, rng)));
  const N = sum(eps.map((e) => e.actions.length));
  const I = env.spec.observations;
  const batch: CustomBatch = {
    steps: N,
    inputs: I,
    obs: new Float32Array(N * I),
    actions: new Int32Array(N),
    returns: new Float32Array(N),
    episodeReturns: eps.map((e) => sum(e.rewards)),
  };
  let k = 0;
  for (const e of eps) {
    let acc = 0;
    const g = new Array<number>(e.rewards.length);
    for (let i = e.rewards.length - 1; i >= 0; i--) g[i] = acc = (e.rewards[i] ?? 0) + gamma * acc;
    e.obs.forEach((o, i) => {
      batch.obs.set(o, (k + i) * I);
      batch.actions[k + i] = e.actions[i] ?? 0;
      batch.returns[k + i] = g[i] ?? 0;
    });
    k += e.actions.length;
  }
  return batch;
}

/**
 * Trainer side: an MLP policy and its Adam state. Each update is one step of the
 * policy-gradient loss with a value baseline (normalised advantages) + value loss − entropy bonus.
 */
export class MlpLearner {
  readonly params: Params;
  private readonly optimizer: tf.AdamOptimizer;

  constructor(
    readonly args: MlpArgs,
    readonly config: CustomTrainConfig,
  ) {
    this.params = initMlp(args, config.seed);
    this.optimizer = tf.train.adam(config.learningRate);
  }

  snapshot(): Promise<MlpSnapshot> {
    return snapshotMlp(this.params, this.args);
  }

  /** One update; returns the loss. */
  async update(b: CustomBatch): Promise<number> {
    if (b.inputs !== this.args.inputs)
      throw new Error(`batch has ${b.inputs} inputs, the policy ${this.args.inputs}`);
    const { valueCoef, entropyCoef } = this.config;
    const A = this.args.actions;
    const obsT = tf.tensor2d(b.obs, [b.steps, b.inputs]); // [N, I]
    const actT = tf.tensor1d(b.actions, 'int32'); // [N]
    const retT = tf.tensor1d(b.returns); // [N]
    // Advantages against the value baseline before the update, normalised (constants of the loss).
    const advT = tf.tidy(() => {
      const adv = retT.sub(mlpForward(this.params, obsT).values); // [N]
      const { mean, variance } = tf.moments(adv);
      return adv.sub(mean).div(variance.sqrt().add(1e-8)) as tf.Tensor1D; // [N]
    });
    const loss = this.optimizer.minimize(() => {
      const { logits, values } = mlpForward(this.params, obsT); // [N, A], [N]
      const logp = tf.logSoftmax(logits); // [N, A]
      const taken = logp.mul(tf.oneHot(actT, A)).sum(1); // [N]
      const pg = advT.mul(taken).mean().neg();
      const vLoss = values.sub(retT).square().mean().mul(0.5);
      const entropy = logp.exp().mul(logp).sum(1).mean().neg();
      return pg.add(vLoss.mul(valueCoef)).sub(entropy.mul(entropyCoef)) as tf.Scalar;
    }, true);
    const value = loss ? ((await loss.data())[0] ?? NaN) : NaN;
    tf.dispose([obsT, actT, retT, advT]);
    loss?.dispose();
    return value;
  }

  dispose(): void {
    tf.dispose([...this.params.values()]);
    this.optimizer.dispose();
  }
}
