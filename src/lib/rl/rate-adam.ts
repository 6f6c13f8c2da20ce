/**
 * Adam (β 0.9 / 0.999, the arithmetic of `tf.train.adam`, bit for bit) whose rate a schedule can
 * change while it keeps its moments, and whose moments are kept per variable by name rather than
 * by position in each step's list (tfjs's own): an update strategy that trains a different subset
 * of tensors at each step (`strategy.ts`) keeps each tensor's moments, and a tensor never trained
 * has none, neither updated nor stored. The bias correction goes by the optimiser's step count.
 */
import * as tf from '@tensorflow/tfjs';

/** A tensor with its name, as an optimiser's weights are listed (tfjs does not export the type). */
type NamedTensor = { name: string; tensor: tf.Tensor };

/** One variable's first and second moments, with the name they are stored under. */
interface Moments {
  stored: string;
  first: tf.Variable;
  second: tf.Variable;
}

export class RateAdam extends tf.AdamOptimizer {
  /** Moments by variable name, in the order each variable was first trained (or restored). */
  private moments = new Map<string, Moments>();
  /** Moments restored by position with no name to bind them: bound to the first step's list, in order. */
  private unbound: Moments[] = [];
  /** β1^(t+1) and β2^(t+1) after t steps (tfjs's `accBeta1`, `accBeta2`). */
  private readonly acc1: tf.Variable;
  private readonly acc2: tf.Variable;

  /**
   * @param names a stored name for each variable (tfjs variable name → e.g. its parameter's
   *   name), in the order the policy lists them: moments are stored as `NAME/m`, `NAME/v` and
   *   restored by those names; without it, by position (as tfjs's Adam).
   */
  constructor(
    learningRate: number,
    private readonly names?: ReadonlyMap<string, string>,
  ) {
    super(learningRate, 0.9, 0.999);
    this.acc1 = tf.tidy(() => tf.scalar(this.beta1).variable(false));
    this.acc2 = tf.tidy(() => tf.scalar(this.beta2).variable(false));
  }

  get rate(): number {
    return this.learningRate;
  }

  set rate(lr: number) {
    if (!(lr > 0 && Number.isFinite(lr)))
      throw new Error(`learning rate must be a positive number, got ${lr}`);
    this.learningRate = lr;
  }

  /** Variables that have moments (trained at least once, or restored), by tfjs variable name. */
  get withState(): string[] {
    return [...this.moments.keys()];
  }

  override applyGradients(variableGradients: tf.NamedTensorMap | NamedTensor[]): void {
    const list = Array.isArray(variableGradients)
      ? variableGradients
      : Object.entries(variableGradients).map(([name, tensor]) => ({ name, tensor }));
    this.bindUnbound(list.map((g) => g.name));
    const beta1 = this.beta1;
    const beta2 = this.beta2;
    tf.tidy(() => {
      const oneMinusAcc1 = tf.sub(1, this.acc1);
      const oneMinusAcc2 = tf.sub(1, this.acc2);
      for (const { name, tensor: gradient } of list) {
        const value = tf.engine().registeredVariables[name];
        if (!value) throw new Error(`Adam: no variable named ${name}`);
        if (gradient == null) continue;
        const m = this.momentsOf(name, value);
        // The same ops in the same order as tfjs's Adam: a full step gives the same bits.
        const newFirst = tf.add(tf.mul(m.first, beta1), tf.mul(gradient, 1 - beta1));
        const newSecond = tf.add(tf.mul(m.second, beta2), tf.mul(tf.square(gradient), 1 - beta2));
        const corrected1 = tf.div(newFirst, oneMinusAcc1);
        const corrected2 = tf.div(newSecond, oneMinusAcc2);
        m.first.assign(newFirst);
        m.second.assign(newSecond);
        const step = tf.mul(
          tf.div(corrected1, tf.add(tf.sqrt(corrected2), this.epsilon)),
          -this.learningRate,
        );
        value.assign(tf.add(step, value));
      }
      this.acc1.assign(tf.mul(this.acc1, beta1));
      this.acc2.assign(tf.mul(this.acc2, beta2));
    });
    this.incrementIterations();
  }

  /** The step counter, then every first moment, then every second moment (tfjs's layout). */
  override async getWeights(): Promise<NamedTensor[]> {
    const all = [...this.moments.values(), ...this.unbound];
    return [
      await this.saveIterations(),
      ...all.map((m) => ({ name: `${m.stored}/m`, tensor: m.first })),
      ...all.map((m) => ({ name: `${m.stored}/v`, tensor: m.second })),
    ];
  }

  /**
   * Restores `getWeights`'s layout. Moments named after the variables' stored names go to those
   * variables (a subset is fine: the rest have none); otherwise, by position over the variables'
   * order (`names`), or without names over the first step's list (a version stored by tfjs's Adam).
   */
  override async setWeights(weightValues: NamedTensor[]): Promise<void> {
    const rest = await this.extractIterations(weightValues);
    const t = this.iterations;
    tf.tidy(() => {
      this.acc1.assign(tf.pow(this.beta1, t + 1));
      this.acc2.assign(tf.pow(this.beta2, t + 1));
    });
    this.disposeMoments();
    const n = rest.length / 2;
    const byStored = new Map([...(this.names ?? [])].map(([variable, stored]) => [stored, variable]));
    const order = [...(this.names?.keys() ?? [])];
    const named = rest.slice(0, n).every((w) => byStored.has(w.name.replace(/\/m$/, '')));
    for (let i = 0; i < n; i++) {
      const first = rest[i] as NamedTensor;
      const second = rest[n + i] as NamedTensor;
      const variable = named ? byStored.get(first.name.replace(/\/m$/, '')) : order[i];
      const m: Moments = {
        stored: variable ? (this.names?.get(variable) ?? variable) : first.name.replace(/\/m$/, ''),
        first: first.tensor.variable(false),
        second: second.tensor.variable(false),
      };
      if (variable) this.moments.set(variable, m);
      else this.unbound.push(m);
    }
  }

  override dispose(): void {
    this.disposeMoments();
    tf.dispose([this.acc1, this.acc2]);
    super.dispose();
  }

  private momentsOf(name: string, value: tf.Variable): Moments {
    let m = this.moments.get(name);
    if (!m) {
      m = {
        stored: this.names?.get(name) ?? name,
        first: tf.tidy(() => tf.zerosLike(value).variable(false)),
        second: tf.tidy(() => tf.zerosLike(value).variable(false)),
      };
      this.moments.set(name, m);
    }
    return m;
  }

  /** Moments restored by position take the names of the first step's variables, in order. */
  private bindUnbound(names: readonly string[]): void {
    if (this.unbound.length === 0) return;
    this.unbound.forEach((m, i) => {
      const name = names[i];
      if (name !== undefined && !this.moments.has(name))
        this.moments.set(name, { ...m, stored: this.names?.get(name) ?? name });
      else tf.dispose([m.first, m.second]);
    });
    this.unbound = [];
  }

  private disposeMoments(): void {
    for (const m of [...this.moments.values(), ...this.unbound]) tf.dispose([m.first, m.second]);
    this.moments.clear();
    this.unbound = [];
  }
}
