import type { JsonValue } from '../sandbox/types';

/** What a custom environment declares about itself in `spec`. */
export interface CustomEnvSpec {
  /** Length of every observation vector. */
  observations: number;
  /** Number of discrete actions; `step(a)` gets an integer in [0, actions). */
  actions: number;
  /** Steps after which an episode is cut off. */
  maxSteps: number;
}

export interface CustomStep {
  observation: number[];
  reward: number;
  done: boolean;
}

/** Something that evaluates an expression in the environment's sandboxed context. */
export interface EnvHost {
  call(expression: string): JsonValue;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A custom JS environment (DESIGN §3): user code that defines `spec`, `reset()` and
 * `step(action)`, running in a sandboxed QuickJS context. Every value coming back is checked,
 * with a message that says what was wrong.
 */
/**
 * A value from the environment as a message shows it. Values cross the sandbox as JSON, where
 * undefined (a missing return), NaN and ±Infinity become null: a null says so.
 */
function shown(v: JsonValue | undefined): string {
  const text = JSON.stringify(v)?.slice(0, 80) ?? 'undefined';
  return /\bnull\b/.test(text) ? `${text} (undefined, NaN and ±Infinity arrive as null)` : text;
}

/**
 * Largest magnitude of a reward or an observation value. The policy trains in 32-bit floats:
 * a finite 1e39 is Infinity there, and returns summed over an episode and squared in the value
 * loss must stay finite too.
 */
export const MAX_MAGNITUDE = 1e9;

const inRange = (x: unknown): x is number =>
  typeof x === 'number' && Number.isFinite(x) && Math.abs(x) <= MAX_MAGNITUDE;

export class CustomEnv {
  readonly spec: CustomEnvSpec;

  constructor(private readonly host: EnvHost) {
    const spec = host.call('typeof spec === "undefined" ? null : spec');
    if (!isRecord(spec))
      throw new Error('the environment must define `const spec = { observations, actions, maxSteps }`');
    for (const k of ['observations', 'actions', 'maxSteps'] as const) {
      const v = spec[k];
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 10_000) {
        throw new Error(`spec.${k} must be a positive integer (≤ 10000), got ${JSON.stringify(v)}`);
      }
    }
    if ((spec.actions as number) < 2) throw new Error('spec.actions must be at least 2');
    this.spec = {
      observations: spec.observations as number,
      actions: spec.actions as number,
      maxSteps: spec.maxSteps as number,
    };
    for (const fn of ['reset', 'step']) {
      if (host.call(`typeof ${fn}`) !== 'function')
        throw new Error(`the environment must define a function ${fn}()`);
    }
  }

  reset(): number[] {
    return this.observation(this.call('reset()'), 'reset()');
  }

  /** Calls into the environment; an error in its code says which call it came from. */
  private call(expression: string): JsonValue {
    try {
      return this.host.call(expression);
    } catch (err) {
      // The same error (its class and kind are what the worker reports), its message prefixed.
      if (err instanceof Error) err.message = `${expression}: ${err.message}`;
      throw err;
    }
  }

  step(action: number): CustomStep {
    if (!Number.isInteger(action) || action < 0 || action >= this.spec.actions)
      throw new Error(`action ${action} is outside [0, ${this.spec.actions})`);
    const r = this.call(`step(${action})`);
    const where = `step(${action})`;
    if (!isRecord(r))
      throw new Error(
        `${where} must return { observation, reward, done }, got ${JSON.stringify(r)?.slice(0, 80)}`,
      );
    if (!inRange(r.reward))
      throw new Error(`${where}.reward must be a finite number of magnitude ≤ 1e9, got ${shown(r.reward)}`);
    if (typeof r.done !== 'boolean')
      throw new Error(`${where}.done must be true or false, got ${JSON.stringify(r.done)}`);
    return {
      observation: this.observation(r.observation ?? null, `${where}.observation`),
      reward: r.reward,
      done: r.done,
    };
  }

  private observation(v: JsonValue, where: string): number[] {
    const n = this.spec.observations;
    if (!Array.isArray(v) || v.length !== n || !v.every(inRange)) {
      throw new Error(`${where} must be an array of ${n} finite numbers of magnitude ≤ 1e9, got ${shown(v)}`);
    }
    return v as number[];
  }
}

/** CartPole (Barto, Sutton & Anderson 1983; the Gym dynamics) in plain JavaScript: the shipped example. */
export const CARTPOLE_JS = `// CartPole: push the cart left (0) or right (1) to keep the pole up.
// Reward 1 per step; the episode ends when the pole tilts past 12° or the cart leaves the track.
const spec = { observations: 4, actions: 2, maxSteps: 200 };

let s = [0, 0, 0, 0]; // x, x', θ, θ'
let t = 0;
let seed = 12345;
function random() {
  // A small seeded generator, so runs are reproducible.
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
}

function reset() {
  s = [0, 0, 0, 0].map(() => (random() - 0.5) * 0.1);
  t = 0;
  return s;
}

function step(action) {
  const [x, dx, th, dth] = s;
  const force = action === 1 ? 10 : -10;
  const cos = Math.cos(th), sin = Math.sin(th);
  const temp = (force + 0.05 * dth * dth * sin) / 1.1;
  const thAcc = (9.8 * sin - cos * temp) / (0.5 * (4 / 3 - (0.1 * cos * cos) / 1.1));
  const xAcc = temp - (0.05 * thAcc * cos) / 1.1;
  s = [x + 0.02 * dx, dx + 0.02 * xAcc, th + 0.02 * dth, dth + 0.02 * thAcc];
  t += 1;
  const fell = Math.abs(s[0]) > 2.4 || Math.abs(s[2]) > 0.2095;
  return { observation: s, reward: 1, done: fell || t >= spec.maxSteps };
}
`;
