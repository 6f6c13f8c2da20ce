import * as tf from '@tensorflow/tfjs';
import type { CustomEnv } from './env';
import {
  initMlp,
  mlpCheckpoint,
  mlpForward,
  mlpLogits,
  paramsFromMlpCheckpoint,
  snapshotMlp,
  type MlpArgs,
  type MlpCheckpoint,
  type MlpSnapshot,
} from '../policy/mlp';
import type { Params, PolicyOutput } from '../policy/model';
import { pickMasked } from '../policy/sampler';
import { packOptimizer, unpackTensors } from '../policy/weights';
import { normalisedAdvantages } from '../rl/advantages';
import type { PpoBatch } from '../rl/batch';
import type { CustomTrainConfig } from './config';
import { RateAdam, type StepMetrics } from '../rl/trainer';
import { ppoUpdate, type PpoPolicy } from '../rl/update';
import { Rng } from '../random';

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

/** Told the episodes played so far, after each one (a panel shows a counter). */
export type OnEpisode = (done: number) => void;

/** Mean return of `episodes` episodes of uniformly random actions: the baseline. */
export function randomReturn(env: CustomEnv, episodes: number, seed: number, onEpisode?: OnEpisode): number {
  const rng = new Rng(seed);
  return meanReturn(episodes, () => playCustom(env, () => rng.int(env.spec.actions)), onEpisode);
}

/** Mean return of `episodes` episodes that `play` plays one by one. */
function meanReturn(episodes: number, play: () => Episode, onEpisode?: OnEpisode): number {
  let total = 0;
  for (let i = 0; i < episodes; i++) {
    total += sum(play().rewards);
    onEpisode?.(i + 1);
  }
  return total / episodes;
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
  onEpisode?: OnEpisode,
): number {
  return meanReturn(episodes, () => playCustom(env, (o) => mlpAct(snap, o, greedy, rng)), onEpisode);
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
  /** log π_behav of each action, recorded by the rollout worker with the version that chose it, [N]. */
  behavLogp: Float32Array;
  /** Return of each episode of the batch. */
  episodeReturns: number[];
}

/**
 * A custom batch as the PPO update reads it: one row (B = 1) of its N steps (T = N), with the
 * observations the MLP takes as input.
 */
export interface MlpPpoBatch extends PpoBatch {
  /** Observations, [N, I]. */
  obs: Float32Array;
  /** Observation length (I). */
  inputs: number;
}

/**
 * Trainer side: an MLP policy and its Adam state, trained by the same PPO update as the
 * transformer (`rl/update.ts`), with the decoupled loss (DESIGN §5): each update is
 * `updatesPerBatch` Adam steps on the batch, the gradient's global norm clipped and checked
 * finite. The advantages are the value baseline's, normalised over the batch
 * (`normalisedAdvantages`), estimated with the weights before the update when the batch is packed.
 */
export class MlpLearner implements PpoPolicy<MlpPpoBatch> {
  readonly params: Params;
  /** The custom settings, and the loss the MLP always trains with. */
  readonly config: CustomTrainConfig & { loss: 'decoupled' };
  readonly optimizer: RateAdam;
  /** Adam steps taken so far. */
  step = 0;

  constructor(
    readonly args: MlpArgs,
    config: CustomTrainConfig,
    /** Parameters to start from (a resumed training's; the learner owns them), else fresh ones. */
    params?: Params,
  ) {
    this.config = { ...config, loss: 'decoupled' };
    this.params = params ?? initMlp(args, config.seed);
    this.optimizer = new RateAdam(config.learningRate);
  }

  /**
   * The learner a stored version was made by: its parameters, its Adam state and its step
   * count, so that training goes on as if it had not stopped.
   */
  static async restore(ckpt: MlpCheckpoint, config: CustomTrainConfig): Promise<MlpLearner> {
    const learner = new MlpLearner(ckpt.mlp, config, paramsFromMlpCheckpoint(ckpt));
    learner.step = ckpt.step;
    if (ckpt.optimizer) {
      const named = unpackTensors(ckpt.optimizer);
      try {
        await learner.optimizer.setWeights(named);
      } catch (err) {
        learner.dispose();
        throw err;
      } finally {
        tf.dispose(named.map((n) => n.tensor));
      }
    }
    return learner;
  }

  snapshot(): Promise<MlpSnapshot> {
    return snapshotMlp(this.params, this.args);
  }

  /** Every parameter and Adam's state, as a stored version holds them. */
  async checkpoint(): Promise<MlpCheckpoint> {
    return mlpCheckpoint(this.params, this.args, this.step, await packOptimizer(this.optimizer));
  }

  /** The environment's actions (V of the update). */
  get numActions(): number {
    return this.args.actions;
  }

  /** Every parameter, the value head too. */
  trainable(): tf.Variable[] {
    return [...this.params.values()];
  }

  /** A batch's observations as the input of `forward`, [N, I]; the caller disposes it. */
  input(batch: MlpPpoBatch): tf.Tensor2D {
    return tf.tensor2d(batch.obs, [batch.length, batch.inputs]); // [N, I]
  }

  /** Logits [1, N, A] and values [1, N] of observations [N, I]: the batch's steps as one row. */
  forward(obs: tf.Tensor2D): PolicyOutput {
    return tf.tidy(() => {
      const { logits, values } = mlpForward(this.params, obs); // [N, A], [N]
      return {
        logits: logits.expandDims(0) as tf.Tensor3D, // [1, N, A]
        values: values.expandDims(0) as tf.Tensor2D, // [1, N]
      };
    });
  }

  /**
   * `b` packed for the PPO update, with its advantages: G − V(s) under the weights before the
   * update, normalised over the batch (the value head lives here, so they are estimated here).
   */
  async ppoBatch(b: CustomBatch): Promise<MlpPpoBatch> {
    if (b.inputs !== this.args.inputs)
      throw new Error(`batch has ${b.inputs} inputs, the policy ${this.args.inputs}`);
    if (b.steps < 1) throw new Error('the batch has no steps');
    const N = b.steps;
    const values = tf.tidy(() => mlpForward(this.params, tf.tensor2d(b.obs, [N, b.inputs])).values); // [N]
    let v: Float32Array;
    try {
      v = Float32Array.from(await values.data());
    } finally {
      values.dispose();
    }
    return {
      batch: 1,
      length: N,
      obs: b.obs,
      inputs: b.inputs,
      actions: b.actions,
      mask: new Float32Array(N).fill(1),
      advantages: normalisedAdvantages(b.returns, v),
      returns: b.returns,
      behavLogp: b.behavLogp,
    };
  }

  /**
   * One update: `updatesPerBatch` Adam steps of `ppoUpdate` on the batch; returns the last one's
   * metrics. A step whose loss or gradient is not finite throws and leaves the policy as it was.
   */
  async update(b: CustomBatch): Promise<StepMetrics> {
    return ppoUpdate(this, await this.ppoBatch(b), { updates: this.config.updatesPerBatch });
  }

  dispose(): void {
    tf.dispose([...this.params.values()]);
    this.optimizer.dispose();
  }
}
