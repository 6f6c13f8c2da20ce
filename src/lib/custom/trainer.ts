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
import type { Params } from '../policy/model';
import { pickMasked } from '../policy/sampler';
import { packOptimizer, unpackTensors } from '../policy/weights';
import type { StepMetrics } from '../rl/trainer';
import type { CustomTrainConfig } from './config';
import { clipByGlobalNorm } from '../rl/losses';
import { decoupledPpoLoss } from '../rl/ppo';
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
 * Trainer side: an MLP policy and its Adam state. Each update is one Adam step of the decoupled
 * PPO loss (DESIGN §5, as the code-writing policy's) with a value baseline (normalised
 * advantages) + value loss − entropy bonus, the gradient's global norm clipped. π_prox is the
 * policy before the update; w = π_prox/π_behav weighs steps that older versions chose.
 */
export class MlpLearner {
  readonly params: Params;
  private readonly optimizer: tf.AdamOptimizer;
  private step = 0;

  constructor(
    readonly args: MlpArgs,
    readonly config: CustomTrainConfig,
    /** Parameters to start from (a resumed training's; the learner owns them), else fresh ones. */
    params?: Params,
  ) {
    this.params = params ?? initMlp(args, config.seed);
    this.optimizer = tf.train.adam(config.learningRate);
  }

  /**
   * The learner a stored version was made by: its parameters, its Adam state and its update
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

  /** One update: `updatesPerBatch` Adam steps on the batch; returns the last one's metrics. */
  async update(b: CustomBatch): Promise<StepMetrics> {
    if (b.inputs !== this.args.inputs)
      throw new Error(`batch has ${b.inputs} inputs, the policy ${this.args.inputs}`);
    if (b.steps < 1) throw new Error('the batch has no steps');
    const t0 = performance.now();
    const { valueCoef, entropyCoef, clipEps, wCap, maxGradNorm } = this.config;
    const N = b.steps;
    const A = this.args.actions;
    const inputs = tf.tidy(() => ({
      obs: tf.tensor2d(b.obs, [N, b.inputs]), // [N, I]
      onehot: tf.oneHot(tf.tensor1d(b.actions, 'int32'), A).toFloat(), // [N, A]
      returns: tf.tensor1d(b.returns), // [N]
      behav: tf.tensor2d(b.behavLogp, [1, N]), // [1, N]
      mask: tf.ones([1, N]) as tf.Tensor2D, // [1, N]
    }));
    // π_prox and the advantages against the value baseline, both with the weights before the update.
    const before = tf.tidy(() => {
      const { logits, values } = mlpForward(this.params, inputs.obs); // [N, A], [N]
      const prox = tf.logSoftmax(logits).mul(inputs.onehot).sum(1).reshape([1, N]) as tf.Tensor2D; // [1, N]
      const adv = inputs.returns.sub(values); // [N]
      const { mean, variance } = tf.moments(adv);
      const normed = adv.sub(mean).div(variance.sqrt().add(1e-8)).reshape([1, N]) as tf.Tensor2D; // [1, N]
      return { prox, adv: normed };
    });
    // Several Adam steps on the same batch (PPO epochs): from the second on, r = π_θ/π_prox moves
    // away from 1 and the clip bounds how far. The metrics are the last step's.
    let parts: Record<string, tf.Scalar> = {};
    for (let u = 0; u < this.config.updatesPerBatch; u++) {
      tf.dispose(Object.values(parts));
      parts = tf.tidy(() => {
        let kept: Record<string, tf.Scalar> = {};
        const { value, grads } = tf.variableGrads(() => {
          const { logits, values } = mlpForward(this.params, inputs.obs); // [N, A], [N]
          const logpAll = tf.logSoftmax(logits); // [N, A]
          const logp = logpAll.mul(inputs.onehot).sum(1).reshape([1, N]) as tf.Tensor2D; // [1, N]
          const policy = decoupledPpoLoss(
            logp,
            before.prox,
            inputs.behav,
            before.adv,
            inputs.mask,
            clipEps,
            wCap,
          );
          const valueLoss = values.sub(inputs.returns).square().mean().mul(0.5) as tf.Scalar;
          const entropy = logpAll.exp().mul(logpAll).sum(1).mean().neg() as tf.Scalar;
          kept = Object.fromEntries(
            Object.entries({ ...policy, valueLoss, entropy }).map(([k, v]) => [k, tf.keep(v)]),
          );
          return policy.pgLoss.add(valueLoss.mul(valueCoef)).sub(entropy.mul(entropyCoef)) as tf.Scalar;
        }, [...this.params.values()]);
        const { clipped, norm } = clipByGlobalNorm(grads, maxGradNorm);
        this.optimizer.applyGradients(Object.entries(clipped).map(([name, tensor]) => ({ name, tensor })));
        return { loss: value, gradNorm: norm, ...kept };
      });
    }
    tf.dispose([inputs, before]);
    const names = Object.keys(parts);
    const packed = tf.tidy(() => tf.stack(names.map((n) => parts[n] as tf.Scalar))); // [names]
    tf.dispose(Object.values(parts));
    const values = await packed.data();
    packed.dispose();
    const got = (n: string) => values[names.indexOf(n)] ?? NaN;
    this.step += 1;
    return {
      step: this.step,
      lossKind: 'decoupled',
      loss: got('loss'),
      pgLoss: got('pgLoss'),
      valueLoss: got('valueLoss'),
      entropy: got('entropy'),
      gradNorm: got('gradNorm'),
      approxKl: got('approxKl'),
      clipFrac: got('clipFrac'),
      wMean: got('wMean'),
      wMax: got('wMax'),
      maskedFrac: got('maskedFrac'),
      lagKl: got('lagKl'),
      learningRate: this.config.learningRate,
      ms: performance.now() - t0,
    };
  }

  dispose(): void {
    tf.dispose([...this.params.values()]);
    this.optimizer.dispose();
  }
}
