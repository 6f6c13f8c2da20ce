/**
 * Adam (β 0.9 / 0.999, the arithmetic of `tf.train.adam`, bit for bit) whose rate a schedule can
 * change while it keeps its moments, and whose state is kept per variable by name rather than by
 * position in each step's list (tfjs's own): an update strategy that trains a different subset of
 * tensors at each step (`strategy.ts`) keeps each tensor's moments, and a tensor left out has
 * none, neither updated nor stored. Each tensor's bias correction goes by its own step count, so
 * that a tensor unfrozen late starts as Adam starts (with the run's count its first hundreds of
 * steps would be up to √(1/(1 − β2)) / 10 ≈ 3 times the rate); a tensor trained at every step
 * counts as the optimiser does, and gets the same bits as tfjs's Adam.
 */
import * as tf from '@tensorflow/tfjs';

/** A tensor with its name, as an optimiser's weights are listed (tfjs does not export the type). */
type NamedTensor = { name: string; tensor: tf.Tensor };

/** One variable's Adam state, with the name it is stored under. */
interface Moments {
  stored: string;
  first: tf.Variable;
  second: tf.Variable;
  /** β1^(t+1) and β2^(t+1) after this tensor's t steps (tfjs's `accBeta1`, `accBeta2`). */
  acc1: tf.Variable;
  acc2: tf.Variable;
  /** Steps this tensor has taken. */
  steps: number;
}

/** The stored entry of each tensor's step count, when one differs from the optimiser's. */
const STEPS = 'steps';

export class RateAdam extends tf.AdamOptimizer {
  /** State by variable name, in the order each variable was first trained (or restored). */
  private moments = new Map<string, Moments>();
  /** State restored by position with no name to bind it: bound to the first step's list, in order. */
  private unbound: Moments[] = [];

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
  }

  get rate(): number {
    return this.learningRate;
  }

  set rate(lr: number) {
    if (!(lr > 0 && Number.isFinite(lr)))
      throw new Error(`learning rate must be a positive number, got ${lr}`);
    this.learningRate = lr;
  }

  /** Variables that have state (trained, or restored), by tfjs variable name. */
  get withState(): string[] {
    return [...this.moments.keys()];
  }

  /** Steps each variable with state has taken, by tfjs variable name. */
  stepsOf(name: string): number | undefined {
    return this.moments.get(name)?.steps;
  }

  /** Drops the state of every variable not in `keep` (tensors an update strategy left out). */
  keepOnly(keep: ReadonlySet<string>): void {
    for (const [name, m] of this.moments)
      if (!keep.has(name)) {
        disposeState(m);
        this.moments.delete(name);
      }
  }

  override applyGradients(variableGradients: tf.NamedTensorMap | NamedTensor[]): void {
    const list = Array.isArray(variableGradients)
      ? variableGradients
      : Object.entries(variableGradients).map(([name, tensor]) => ({ name, tensor }));
    this.bindUnbound(list.map((g) => g.name));
    const beta1 = this.beta1;
    const beta2 = this.beta2;
    tf.tidy(() => {
      for (const { name, tensor: gradient } of list) {
        const value = tf.engine().registeredVariables[name];
        if (!value) throw new Error(`Adam: no variable named ${name}`);
        if (gradient == null) continue;
        const m = this.momentsOf(name, value);
        // The same ops in the same order as tfjs's Adam: a full step gives the same bits.
        const oneMinusAcc1 = tf.sub(1, m.acc1);
        const oneMinusAcc2 = tf.sub(1, m.acc2);
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
        m.acc1.assign(tf.mul(m.acc1, beta1));
        m.acc2.assign(tf.mul(m.acc2, beta2));
        m.steps += 1;
      }
    });
    this.incrementIterations();
  }

  /**
   * The step counter, every first moment, every second moment (tfjs's layout), then, when some
   * tensor's step count differs from the optimiser's, `steps`: each tensor's, in order (int32).
   * The caller disposes `iter` and `steps`; the moments are the optimiser's own.
   */
  override async getWeights(): Promise<NamedTensor[]> {
    const all = [...this.moments.values(), ...this.unbound];
    const t = this.iterations;
    const own = all.some((m) => m.steps !== t);
    return [
      await this.saveIterations(),
      ...all.map((m) => ({ name: `${m.stored}/m`, tensor: m.first })),
      ...all.map((m) => ({ name: `${m.stored}/v`, tensor: m.second })),
      ...(own
        ? [
            {
              name: STEPS,
              tensor: tf.tensor1d(
                all.map((m) => m.steps),
                'int32',
              ),
            },
          ]
        : []),
    ];
  }

  /**
   * Restores `getWeights`'s layout. Moments named after the variables' stored names go to those
   * variables (a subset is fine: the rest have none); otherwise, by position over the variables'
   * order (`names`), or without names over the first step's list (a version stored by tfjs's Adam).
   * Without `steps`, each tensor counts the optimiser's steps.
   */
  override async setWeights(weightValues: NamedTensor[]): Promise<void> {
    let rest = await this.extractIterations(weightValues);
    const t = this.iterations;
    let counts: number[] | undefined;
    if (rest.at(-1)?.name === STEPS) {
      counts = Array.from(await (rest.at(-1) as NamedTensor).tensor.data());
      rest = rest.slice(0, -1);
    }
    this.disposeMoments();
    const n = rest.length / 2;
    const byStored = new Map([...(this.names ?? [])].map(([variable, stored]) => [stored, variable]));
    const order = [...(this.names?.keys() ?? [])];
    const named = rest.slice(0, n).every((w) => byStored.has(w.name.replace(/\/m$/, '')));
    for (let i = 0; i < n; i++) {
      const first = rest[i] as NamedTensor;
      const second = rest[n + i] as NamedTensor;
      const variable = named ? byStored.get(first.name.replace(/\/m$/, '')) : order[i];
      const steps = counts?.[i] ?? t;
      const m: Moments = {
        stored: variable ? (this.names?.get(variable) ?? variable) : first.name.replace(/\/m$/, ''),
        first: first.tensor.variable(false),
        second: second.tensor.variable(false),
        // As tfjs restores them: β^(t+1).
        acc1: tf.tidy(() => tf.pow(this.beta1, steps + 1).variable(false)),
        acc2: tf.tidy(() => tf.pow(this.beta2, steps + 1).variable(false)),
        steps,
      };
      if (variable) this.moments.set(variable, m);
      else this.unbound.push(m);
    }
  }

  override dispose(): void {
    this.disposeMoments();
    super.dispose();
  }

  private momentsOf(name: string, value: tf.Variable): Moments {
    let m = this.moments.get(name);
    if (!m) {
      m = {
        stored: this.names?.get(name) ?? name,
        first: tf.tidy(() => tf.zerosLike(value).variable(false)),
        second: tf.tidy(() => tf.zerosLike(value).variable(false)),
        acc1: tf.tidy(() => tf.scalar(this.beta1).variable(false)),
        acc2: tf.tidy(() => tf.scalar(this.beta2).variable(false)),
        steps: 0,
      };
      this.moments.set(name, m);
    }
    return m;
  }

  /** State restored by position takes the names of the first step's variables, in order. */
  private bindUnbound(names: readonly string[]): void {
    if (this.unbound.length === 0) return;
    this.unbound.forEach((m, i) => {
      const name = names[i];
      if (name !== undefined && !this.moments.has(name))
        this.moments.set(name, { ...m, stored: this.names?.get(name) ?? name });
      else disposeState(m);
    });
    this.unbound = [];
  }

  private disposeMoments(): void {
    for (const m of [...this.moments.values(), ...this.unbound]) disposeState(m);
    this.moments.clear();
    this.unbound = [];
  }
}

function disposeState(m: Moments): void {
  tf.dispose([m.first, m.second, m.acc1, m.acc2]);
}
