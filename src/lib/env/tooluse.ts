import { FAMILIES, generateLayoutTasks, suiteTask, type GeneratedTask, type TaskLayout } from './families';
import { OUTSIDE_FAMILIES, OUTSIDE_FAMILY } from './generalisation';
import type { Example, Task, TaskSuite } from './suite';

/**
 * The built-in tool-use tasks (DESIGN §3.1): the same families as the examples kind, but the
 * observation shows one example (`f( 1 )= 3` fits `x+2`, `3*x`, `2*x+1`, `3`), so the policy
 * has to run its program against the task's tests to find out which it is.
 */

/** The one input a tool-use task shows. */
export const TOOLUSE_SHOWN = [1];
/**
 * The inputs of its tests (`<run>`): with the shown one, they tell every two functions of the
 * families apart (the thresholds of `x>a?x:b` need 2 to 7; `x%8` and `x%9` need 8).
 */
export const TOOLUSE_TESTS = [0, 2, 3, 4, 5, 6, 7, 8];
/** The inputs of its hidden tests (`<submit>`): none of them shown or run. */
export const TOOLUSE_HIDDEN = [9, 10, 11, 12, 13];

/** Where the tool-use kind puts its inputs; its ids start `tool:`. */
export const TOOLUSE_LAYOUT: TaskLayout = {
  kind: 'tooluse',
  idPrefix: 'tool:',
  shown: TOOLUSE_SHOWN,
  tests: TOOLUSE_TESTS,
  hidden: TOOLUSE_HIDDEN,
};

/**
 * Every family's tool-use tasks, split as `generateTasks` splits the examples kind: the same seed
 * gives the same tasks and split; no held-out task computes, at its inputs (shown, tests and
 * hidden), what another task computes.
 */
export function generateToolUseTasks(seed: number): GeneratedTask[] {
  return generateLayoutTasks(TOOLUSE_LAYOUT, seed, FAMILIES);
}

/** The input a shifted tool-use task shows instead of 1 (its tests take 1 in its place). */
export const TOOLUSE_SHIFTED_SHOWN = [6];
const SHIFTED_TESTS = [0, 1, 2, 3, 4, 5, 7, 8];

const at = (inputs: readonly number[], f: (x: number) => number): Example[] =>
  inputs.map((x) => ({ input: x, output: f(x) }));

/**
 * The tool-use generalisation tasks of `tasks` (`generateToolUseTasks(seed)`): each held-out task
 * shown at 6 instead of 1 (every training task shows 1), then the programs outside every family
 * (`OUTSIDE_FAMILIES`) at the usual inputs. Their inputs are those of the training tasks, so a
 * held-out task stays unlike every training task there.
 */
export function toolUseGeneralisationTasks(tasks: readonly GeneratedTask[]): GeneratedTask[] {
  const shifted = tasks
    .filter((t) => t.heldOut)
    .map((t): GeneratedTask => {
      const value = new Map([...t.examples, ...(t.tests ?? []), ...t.hidden].map((e) => [e.input, e.output]));
      const f = (x: number) => {
        const y = value.get(x);
        if (y === undefined) throw new Error(`task ${t.id} has no value at ${x}`);
        return y;
      };
      return {
        ...t,
        id: `${t.id}@${TOOLUSE_SHIFTED_SHOWN.join(',')}`,
        examples: at(TOOLUSE_SHIFTED_SHOWN, f),
        tests: at(SHIFTED_TESTS, f),
        generalisation: true,
      };
    });
  const outside = OUTSIDE_FAMILIES.map((p): GeneratedTask => ({
    id: `${TOOLUSE_LAYOUT.idPrefix}${OUTSIDE_FAMILY}:${p.program}`,
    level: p.level,
    kind: 'tooluse',
    examples: at(TOOLUSE_SHOWN, p.apply),
    tests: at(TOOLUSE_TESTS, p.apply),
    hidden: at(TOOLUSE_HIDDEN, p.apply),
    family: OUTSIDE_FAMILY,
    program: p.program,
    heldOut: true,
    generalisation: true,
  }));
  return [...shifted, ...outside];
}

/** The built-in tool-use training and held-out suites for `seed`, as suite files would hold them. */
export function toolUseSuites(seed: number): { train: TaskSuite; heldOut: TaskSuite } {
  const tasks = generateToolUseTasks(seed);
  return {
    train: {
      name: `built-in tool use (seed ${seed}) training`,
      tasks: tasks.filter((t) => !t.heldOut).map(suiteTask),
    },
    heldOut: {
      name: `built-in tool use (seed ${seed}) held-out`,
      tasks: tasks.filter((t) => t.heldOut).map(suiteTask),
    },
  };
}

/**
 * A tool-use task shown `extra` more examples, taken from its tests in order (inputs it does not
 * show already): a hint that fades as training goes on (`task.hintFraction`). The tests stay.
 */
export function withHint(task: Task, extra = 1): Task {
  const shown = new Set(task.examples.map((e) => e.input));
  const more = (task.tests ?? []).filter((t) => !shown.has(t.input)).slice(0, extra);
  return more.length ? { ...task, examples: [...task.examples, ...more] } : task;
}
