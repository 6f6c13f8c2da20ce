import * as tf from '@tensorflow/tfjs';
import type { CustomEnv } from '../env/custom';
import { initMlp, mlpForward, mlpLogits, snapshotMlp, type MlpSnapshot } from '../policy/mlp';
import type { Params } from '../policy/model';
import { pickMasked } from '../policy/sampler';
import { Rng } from './random';
import { DEFAULT_CUSTOM_TRAIN, type CustomIteration, type CustomTrainConfig } from './custom-config';

interface Trajectory {
  obs: number[][];
  actions: number[];
  rewards: number[];
}

/** Plays one episode with `act`; the environment's own `maxSteps` bounds it. */
export function playCustom(env: CustomEnv, act: (obs: readonly number[]) => number): Trajectory {
  const t: Trajectory = { obs: [], actions: [], rewards: [] };
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
  return (
    sum(
      Array.from({ length: episodes }, () => sum(playCustom(env, () => rng.int(env.spec.actions)).rewards)),
    ) / episodes
  );
}

/**
 * Trains an MLP policy on a custom environment: collect episodes with the current policy,
 * returns-to-go with a value baseline (normalised advantages), one Adam step of the
 * policy-gradient loss + value loss − entropy bonus per iteration.
 */
export class CustomTrainer {
  readonly params: Params;
  private readonly optimizer: tf.AdamOptimizer;
  private readonly rng: Rng;
  iteration = 0;

  constructor(
    private readonly env: CustomEnv,
    readonly config: CustomTrainConfig = DEFAULT_CUSTOM_TRAIN,
  ) {
    this.params = initMlp(
      { inputs: env.spec.observations, hidden: config.hidden, actions: env.spec.actions },
      config.seed,
    );
    this.optimizer = tf.train.adam(config.learningRate);
    this.rng = new Rng(config.seed);
  }

  /** Mean return of greedy or sampled play with the current weights. */
  async evaluate(episodes: number, greedy: boolean): Promise<number> {
    const snap = await this.snapshot();
    return (
      sum(
        Array.from({ length: episodes }, () =>
          sum(playCustom(this.env, (o) => this.act(snap, o, greedy)).rewards),
        ),
      ) / episodes
    );
  }

  async step(): Promise<CustomIteration> {
    const t0 = performance.now();
    const snap = await this.snapshot();
    const trajs = Array.from({ length: this.config.episodesPerIteration }, () =>
      playCustom(this.env, (o) => this.act(snap, o, false)),
    );
    const obs = trajs.flatMap((t) => t.obs);
    const actions = trajs.flatMap((t) => t.actions);
    const returns = trajs.flatMap((t) => {
      const g: number[] = new Array<number>(t.rewards.length);
      let acc = 0;
      for (let i = t.rewards.length - 1; i >= 0; i--)
        g[i] = acc = (t.rewards[i] ?? 0) + this.config.gamma * acc;
      return g;
    });
    const N = obs.length;
    const I = this.env.spec.observations;
    const A = this.env.spec.actions;
    const { valueCoef, entropyCoef } = this.config;
    const obsT = tf.tensor2d(obs.flat(), [N, I]); // [N, I]
    const actT = tf.tensor1d(actions, 'int32'); // [N]
    const retT = tf.tensor1d(returns); // [N]
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
    const lossValue = loss ? ((await loss.data())[0] ?? NaN) : NaN;
    tf.dispose([obsT, actT, retT, advT]);
    loss?.dispose();
    this.iteration += 1;
    return {
      iteration: this.iteration,
      meanReturn: sum(trajs.map((t) => sum(t.rewards))) / trajs.length,
      meanLength: N / trajs.length,
      loss: lossValue,
      ms: performance.now() - t0,
    };
  }

  private snapshot(): Promise<MlpSnapshot> {
    return snapshotMlp(this.params, {
      inputs: this.env.spec.observations,
      hidden: this.config.hidden,
      actions: this.env.spec.actions,
    });
  }

  private act(snap: MlpSnapshot, obs: readonly number[], greedy: boolean): number {
    const logits = mlpLogits(snap, obs);
    return pickMasked(logits, new Uint8Array(logits.length).fill(1), { greedy, temperature: 1 }, this.rng)
      .token;
  }

  dispose(): void {
    tf.dispose([...this.params.values()]);
    this.optimizer.dispose();
  }
}
