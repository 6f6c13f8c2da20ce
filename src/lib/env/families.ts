import { fnv1a } from '../sandbox/cache';
import { Rng } from '../random';
import type { Example, Level, Task, TaskKind, TaskSuite } from './suite';

/** A parameterised family of tasks: `source(p)` is the program text, `apply(p, x)` its value. */
export interface Family {
  name: string;
  level: Level;
  /** Every parameter tuple of the family, in a fixed order. */
  params: readonly (readonly number[])[];
  /** The target program as a JavaScript expression in x (DESIGN §3 token alphabet). */
  source(p: readonly number[]): string;
  apply(p: readonly number[], x: number): number;
  /** What each parameter does in the program (the compositional split matches parts by it). */
  roles?: readonly Role[];
}

/**
 * A parameter's part in a program: the number added (`x+b`, a constant), the factor (`a*x`), the
 * number added before a product (`(x+a)*b`), the modulus, the threshold of a comparison.
 */
export type Role = 'offset' | 'scale' | 'shift' | 'modulus' | 'threshold';

const range = (lo: number, hi: number) => Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);
const pairs = (as: number[], bs: number[]) => as.flatMap((a) => bs.map((b) => [a, b]));
const at = (p: readonly number[], i: number) => p[i] ?? 0;
const sign = (n: number) => (n < 0 ? `-${-n}` : `+${n}`);

/** A family without its parameters: what a program of that shape is and computes. */
type Shape = Omit<Family, 'params'>;

/** Every shape of the built-in and the procedural families, by name. */
const SHAPES: Record<string, Shape> = {
  constant: {
    name: 'constant',
    level: 'easy',
    source: (p) => `${at(p, 0)}`,
    apply: (p) => at(p, 0),
    roles: ['offset'],
  },
  'x+b': {
    name: 'x+b',
    level: 'easy',
    source: (p) => `x${sign(at(p, 0))}`,
    apply: (p, x) => x + at(p, 0),
    roles: ['offset'],
  },
  'a*x': {
    name: 'a*x',
    level: 'easy',
    source: (p) => `${at(p, 0)}*x`,
    apply: (p, x) => at(p, 0) * x,
    roles: ['scale'],
  },
  'a*x+b': {
    name: 'a*x+b',
    level: 'medium',
    source: (p) => `${at(p, 0)}*x+${at(p, 1)}`,
    apply: (p, x) => at(p, 0) * x + at(p, 1),
    roles: ['scale', 'offset'],
  },
  '(x+a)*b': {
    name: '(x+a)*b',
    level: 'medium',
    source: (p) => `(x+${at(p, 0)})*${at(p, 1)}`,
    apply: (p, x) => (x + at(p, 0)) * at(p, 1),
    roles: ['shift', 'scale'],
  },
  'x*x+b': {
    name: 'x*x+b',
    level: 'medium',
    source: (p) => `x*x+${at(p, 0)}`,
    apply: (p, x) => x * x + at(p, 0),
    roles: ['offset'],
  },
  'x%a': {
    name: 'x%a',
    level: 'hard',
    source: (p) => `x%${at(p, 0)}`,
    apply: (p, x) => x % at(p, 0),
    roles: ['modulus'],
  },
  'x%a+b': {
    name: 'x%a+b',
    level: 'hard',
    source: (p) => `x%${at(p, 0)}+${at(p, 1)}`,
    apply: (p, x) => (x % at(p, 0)) + at(p, 1),
    roles: ['modulus', 'offset'],
  },
  'x>a?x:b': {
    name: 'x>a?x:b',
    level: 'hard',
    source: (p) => `x>${at(p, 0)}?x:${at(p, 1)}`,
    apply: (p, x) => (x > at(p, 0) ? x : at(p, 1)),
    roles: ['threshold', 'offset'],
  },
};

/** Families of these shapes, each over its parameter tuples. */
const familiesOf = (params: Record<string, (readonly number[])[]>): Family[] =>
  Object.entries(params).map(([name, p]) => {
    const shape = SHAPES[name];
    if (!shape) throw new Error(`no shape ${name}`);
    return { ...shape, params: p };
  });

const ones = (xs: number[]) => xs.map((x) => [x]);

/** The built-in families: constant, x+b, a·x, a·x+b, (x+a)·b, x·x+b, x%a, a conditional. */
export const FAMILIES: readonly Family[] = familiesOf({
  constant: ones(range(0, 9)),
  'x+b': ones(range(-9, 9).filter((b) => b !== 0)),
  'a*x': ones(range(2, 9)),
  'a*x+b': pairs(range(2, 9), range(1, 9)),
  '(x+a)*b': pairs(range(1, 9), range(2, 9)),
  'x*x+b': ones(range(0, 9)),
  'x%a': ones(range(2, 9)),
  'x>a?x:b': pairs(range(1, 6), range(0, 9)),
});

/**
 * The procedural function space of the compositional split (`compositional.ts`): the families'
 * shapes over constants far wider than the built-in tasks' (too many functions to look up), plus
 * `x%a+b`, each parameter in a named role; a role's values recur across shapes (an offset of
 * `x+b` is an offset of `a*x+b`, `x*x+b`, a constant), so a held-out task can be a new
 * combination of parts that training uses in the same role.
 */
export const PROCEDURAL_FAMILIES: readonly Family[] = familiesOf({
  constant: ones(range(0, 99)),
  'x+b': ones(range(-40, 60).filter((b) => b !== 0)),
  'a*x': ones(range(2, 19)),
  'a*x+b': pairs(range(2, 15), range(1, 40)),
  '(x+a)*b': pairs(range(1, 15), range(2, 12)),
  'x*x+b': ones(range(0, 60)),
  'x%a': ones(range(2, 9)),
  // Not x%9+b: at the tool-use tasks' shown and test inputs (0–8) it is x+b.
  'x%a+b': pairs(range(2, 8), range(1, 30)),
  'x>a?x:b': pairs(range(1, 6), range(0, 40)),
});

/** Inputs shown to the policy, and inputs of the hidden tests. */
export const VISIBLE_INPUTS = [1, 2, 4];
export const HIDDEN_INPUTS = [0, 3, 5, 7, 10, 13];

/** Fraction of each family's tasks held out from training (at least 20%). */
export const HELD_OUT_FRACTION = 0.25;

const examplesOf = (f: Family, p: readonly number[], inputs: readonly number[]): Example[] =>
  inputs.map((x) => ({ input: x, output: f.apply(p, x) }));

/** A built-in task, with its family and target program (for tests and the brute-force baseline). */
export interface GeneratedTask extends Task {
  family: string;
  program: string;
  heldOut: boolean;
  /** A task of the generalisation suite (`generalisation.ts`): held out, reported apart. */
  generalisation?: boolean;
}

/** Where a task kind puts a family's inputs: shown, run by `<run>` (tool use), and hidden. */
export interface TaskLayout {
  kind: TaskKind;
  /** Prefix of the task ids (`''` for the examples kind: its ids are `family:params`). */
  idPrefix: string;
  shown: readonly number[];
  /** The tests `<run>` checks (the tool-use kind only). */
  tests?: readonly number[];
  hidden: readonly number[];
}

/** The examples kind: inputs 1, 2, 4 shown, enough to write the program at once. */
export const EXAMPLES_LAYOUT: TaskLayout = {
  kind: 'examples',
  idPrefix: '',
  shown: VISIBLE_INPUTS,
  hidden: HIDDEN_INPUTS,
};

/**
 * Generates every family's tasks and splits each family deterministically into training and
 * held-out tasks: the same seed gives the same suite and the same split, on every machine. No
 * held-out task computes, on its inputs, what another task computes.
 */
export function generateTasks(seed: number, families: readonly Family[] = FAMILIES): GeneratedTask[] {
  return generateLayoutTasks(EXAMPLES_LAYOUT, seed, families);
}

/** `generateTasks` for any layout: the tasks of `families` with their inputs where `layout` puts them. */
export function generateLayoutTasks(
  layout: TaskLayout,
  seed: number,
  families: readonly Family[] = FAMILIES,
): GeneratedTask[] {
  const { byFamily, shared } = layoutTasks(layout, families);
  for (const [f, tasks] of byFamily) {
    const order = shuffled(
      tasks.filter((t) => !shared.has(t.id)),
      familyRng(seed, layout, f),
    );
    const heldOut = Math.max(1, Math.ceil(tasks.length * HELD_OUT_FRACTION));
    for (const t of order.slice(0, heldOut)) t.heldOut = true;
  }
  // One shuffle of the whole list so suites do not list families in blocks.
  return shuffled([...byFamily.values()].flat(), new Rng(seed));
}

/**
 * Every family's tasks at `layout`'s inputs, none held out yet, and the ids of those whose
 * function another task also computes there (`(x+1)*2` and `2*x+2`): such a task always trains.
 */
export function layoutTasks(
  layout: TaskLayout,
  families: readonly Family[],
): { byFamily: Map<Family, GeneratedTask[]>; shared: Set<string> } {
  const inputs = [...layout.shown, ...(layout.tests ?? []), ...layout.hidden];
  const signature = (f: Family, p: readonly number[]) => inputs.map((x) => f.apply(p, x)).join(',');
  const seen = new Map<string, number>();
  for (const f of families)
    for (const p of f.params) seen.set(signature(f, p), (seen.get(signature(f, p)) ?? 0) + 1);
  const byFamily = new Map<Family, GeneratedTask[]>();
  const shared = new Set<string>();
  for (const f of families) {
    byFamily.set(
      f,
      f.params.map((p): GeneratedTask => {
        const id = `${layout.idPrefix}${f.name}:${p.join(',')}`;
        if ((seen.get(signature(f, p)) ?? 0) > 1) shared.add(id);
        const task: GeneratedTask = {
          id,
          level: f.level,
          examples: examplesOf(f, p, layout.shown),
          hidden: examplesOf(f, p, layout.hidden),
          family: f.name,
          program: f.source(p),
          heldOut: false,
        };
        if (layout.kind === 'examples') return task;
        return { ...task, kind: layout.kind, tests: examplesOf(f, p, layout.tests ?? []) };
      }),
    );
  }
  return { byFamily, shared };
}

/**
 * The random stream of one family's split. A seeded shuffle of each family is a uniform sample
 * (sorting by a hash of similar ids held out clusters, such as every large constant).
 */
export const familyRng = (seed: number, layout: TaskLayout, f: Family): Rng =>
  new Rng(parseInt(fnv1a(`${seed}:${layout.idPrefix}${f.name}`), 16));

/** A Fisher–Yates shuffle of a copy of `items`. */
export function shuffled<T>(items: readonly T[], rng: Rng): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** A generated task as a suite file holds it: without its family, program and split. */
export const suiteTask = ({
  family: _f,
  program: _p,
  heldOut: _h,
  generalisation: _g,
  ...task
}: GeneratedTask): Task => task;

/** The built-in training and held-out suites for `seed`, as suite files would hold them. */
export function builtInSuites(seed: number): { train: TaskSuite; heldOut: TaskSuite } {
  const tasks = generateTasks(seed);
  return {
    train: {
      name: `built-in (seed ${seed}) training`,
      tasks: tasks.filter((t) => !t.heldOut).map(suiteTask),
    },
    heldOut: {
      name: `built-in (seed ${seed}) held-out`,
      tasks: tasks.filter((t) => t.heldOut).map(suiteTask),
    },
  };
}
