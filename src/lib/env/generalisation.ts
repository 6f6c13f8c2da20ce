import { FAMILIES, HIDDEN_INPUTS, PROCEDURAL_FAMILIES, VISIBLE_INPUTS, type GeneratedTask } from './families';
import type { Example, Level } from './suite';

/**
 * The generalisation suite, beside the held-out one: tasks no run trains on that ask for more
 * than a new member of a trained family at the usual inputs. (a) Each held-out task of the
 * built-in suite shown at other inputs (`SHIFTED_VISIBLE`, hidden tests at `SHIFTED_HIDDEN`): the
 * training tasks all show 1, 2, 4. (b) Programs within the grammar but outside every training
 * family (`OUTSIDE_FAMILIES`), at the usual inputs. Deterministic: the same suite gives the same
 * tasks; decontamination keeps them out of training as it keeps the held-out tasks.
 */

/**
 * Inputs the shifted tasks show (none of 1, 2, 4), and their hidden tests' inputs (2 to 6 all
 * present, so that the thresholds of `x>a?x:b` tell apart).
 */
export const SHIFTED_VISIBLE = [3, 6, 8];
export const SHIFTED_HIDDEN = [0, 2, 4, 5, 9, 11, 12];

/** A program outside every family, with its level and its value. */
interface OutsideProgram {
  program: string;
  level: Level;
  apply(x: number): number;
}

/** Programs of the grammar no family makes (checked in the test against every family's tasks). */
export const OUTSIDE_FAMILIES: readonly OutsideProgram[] = [
  { program: '9-x', level: 'easy', apply: (x) => 9 - x },
  { program: '6-x', level: 'easy', apply: (x) => 6 - x },
  { program: '2-x', level: 'easy', apply: (x) => 2 - x },
  { program: '-x', level: 'easy', apply: (x) => -x },
  { program: '2*x-1', level: 'medium', apply: (x) => 2 * x - 1 },
  { program: '3*x-2', level: 'medium', apply: (x) => 3 * x - 2 },
  { program: 'x*x+x', level: 'medium', apply: (x) => x * x + x },
  { program: 'x*x-x', level: 'medium', apply: (x) => x * x - x },
  { program: '(x-2)*3', level: 'medium', apply: (x) => (x - 2) * 3 },
  { program: 'x%3*2', level: 'hard', apply: (x) => (x % 3) * 2 },
  { program: 'x%4+1', level: 'hard', apply: (x) => (x % 4) + 1 },
  { program: 'x>5?1:0', level: 'hard', apply: (x) => (x > 5 ? 1 : 0) },
  { program: 'x>3?2*x:1', level: 'hard', apply: (x) => (x > 3 ? 2 * x : 1) },
];

/** Family name of the programs outside every family. */
export const OUTSIDE_FAMILY = 'outside';

const at = (inputs: readonly number[], f: (x: number) => number): Example[] =>
  inputs.map((x) => ({ input: x, output: f(x) }));

/**
 * The generalisation tasks of a built-in suite (`generateTasks(seed)`): its held-out tasks at the
 * shifted inputs, then the programs outside every family. Each is held out (`heldOut`) and
 * marked `generalisation`, so that evaluations report it apart.
 */
export function generalisationTasks(suite: readonly GeneratedTask[]): GeneratedTask[] {
  const inputs = [...SHIFTED_VISIBLE, ...SHIFTED_HIDDEN];
  // What each training task computes at the shifted inputs: a shifted task equal to one there
  // (`x>2?x:3` and `x>4?x:3` agree at every shifted input) would be no test of generalisation.
  const trained = new Set(
    suite.filter((t) => !t.heldOut).map((t) => inputs.map(familyValue(t.id)).join(',')),
  );
  const shifted = suite
    .filter((t) => t.heldOut && !trained.has(inputs.map(familyValue(t.id)).join(',')))
    .map((t): GeneratedTask => {
      const f = familyValue(t.id);
      return {
        id: `${t.id}@${SHIFTED_VISIBLE.join(',')}`,
        level: t.level,
        examples: at(SHIFTED_VISIBLE, f),
        hidden: at(SHIFTED_HIDDEN, f),
        family: t.family,
        program: t.program,
        heldOut: true,
        generalisation: true,
      };
    });
  const outside = OUTSIDE_FAMILIES.map((p): GeneratedTask => ({
    id: `${OUTSIDE_FAMILY}:${p.program}`,
    level: p.level,
    examples: at(VISIBLE_INPUTS, p.apply),
    hidden: at(HIDDEN_INPUTS, p.apply),
    family: OUTSIDE_FAMILY,
    program: p.program,
    heldOut: true,
    generalisation: true,
  }));
  return [...shifted, ...outside];
}

/** Every family task's value by id (`family:params`, as the generators name them), built once. */
let valueById: Map<string, (x: number) => number> | null = null;

/** The value at x of the family task with this id, of the built-in or the procedural families. */
function familyValue(id: string): (x: number) => number {
  if (!valueById) {
    valueById = new Map();
    for (const fam of [...FAMILIES, ...PROCEDURAL_FAMILIES])
      for (const p of fam.params) valueById.set(`${fam.name}:${p.join(',')}`, (x) => fam.apply(p, x));
  }
  const value = valueById.get(id);
  if (!value) throw new Error(`no built-in family makes the task ${id}`);
  return value;
}
