/**
 * How the page names a task. A suite's task goes by its id; a relabelled (hindsight) task's id
 * is a list of outputs (`hindsight:0,8,16,…`), so it is named by what it asks for instead: the
 * outputs an earlier program gave, as `f(x) = y` where its inputs are known.
 */
import { RELABELLED_PREFIX, type Task } from '../env/suite';
import { isRelabelledTask } from '../rl/hindsight';

/** Points of a relabelled goal named before an ellipsis. */
const SHOWN = 4;

/**
 * The name of task `id`: the id itself, or for a relabelled task "relabelled goal: f(0) = 0,
 * f(1) = 8, …" — its outputs at its inputs in ascending order when `task` gives them, else the
 * outputs as the id lists them.
 */
export function taskName(id: string, task?: Pick<Task, 'examples' | 'tests' | 'hidden'>): string {
  if (!isRelabelledTask(id)) return id;
  if (task) {
    const points = new Map<number, number>();
    for (const e of [...task.examples, ...(task.tests ?? []), ...task.hidden])
      if (!points.has(e.input)) points.set(e.input, e.output);
    const sorted = [...points].sort(([a], [b]) => a - b);
    if (sorted.length) return `relabelled goal: ${listed(sorted.map(([x, y]) => `f(${x}) = ${y}`))}`;
  }
  const outputs = id.slice(RELABELLED_PREFIX.length).split(',').filter(Boolean);
  return outputs.length ? `relabelled goal: outputs ${listed(outputs)}` : 'relabelled goal';
}

/** What a relabelled task is, for a tooltip beside its name; undefined for a suite's task. */
export function taskNameNote(id: string): string | undefined {
  if (!isRelabelledTask(id)) return undefined;
  return `A goal made of the outputs an earlier program gave (hindsight relabelling): the policy is asked for a program with these outputs. Internal id: ${id}`;
}

/** The first `SHOWN` items, then an ellipsis when there are more. */
const listed = (items: readonly string[]): string =>
  items.length > SHOWN ? `${items.slice(0, SHOWN).join(', ')}, …` : items.join(', ');
