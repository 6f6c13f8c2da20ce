import { HeldOutIndex, PROBE_INPUTS } from './decontaminate';
import {
  HELD_OUT_FRACTION,
  PROCEDURAL_FAMILIES,
  familyRng,
  layoutTasks,
  shuffled,
  type Family,
  type GeneratedTask,
  type TaskLayout,
} from './families';
import { Rng } from '../random';

/**
 * The compositional split (`task.split`, DESIGN §3): tasks drawn from the procedural function
 * space (`PROCEDURAL_FAMILIES`), where a held-out task is a combination of parts that training
 * tasks of its level use in the same role, never seen together: `x+23` is held out only while
 * some training task of the easy level has the offset 23 (the constant 23), `4*x+9` only while 4
 * scales and 9 offsets in medium training tasks. Memorising the training
 * functions cannot answer it; reading the examples can.
 */

/** Most tasks of one family held out, so that the held-out set stays quick to score. */
export const COMPOSITIONAL_HELD_OUT = 12;

/** The named parts of one task: its level, each parameter's role and value. */
const partsOf = (f: Family, p: readonly number[]): string[] =>
  p.map((v, i) => `${f.level}:${f.roles?.[i] ?? `${f.name}#${i}`}=${v}`);

/**
 * The tasks of `families` at `layout`'s inputs, split compositionally with `seed`: each family's
 * tasks in a seeded order, held out one by one (up to a quarter, at most
 * `COMPOSITIONAL_HELD_OUT`) while each of the task's parts stays in some training task of its
 * level. A function two tasks compute always trains. Decontamination is exact: a training task
 * that computes, at its inputs, what a task of `generalisation(tasks)` asks for is left out.
 */
export function generateCompositionalTasks(
  layout: TaskLayout,
  seed: number,
  generalisation: (tasks: readonly GeneratedTask[]) => GeneratedTask[],
  families: readonly Family[] = PROCEDURAL_FAMILIES,
): GeneratedTask[] {
  const { byFamily, shared } = layoutTasks(layout, families);
  const trainedUses = new Map<string, number>();
  for (const f of families)
    for (const p of f.params)
      for (const part of partsOf(f, p)) trainedUses.set(part, (trainedUses.get(part) ?? 0) + 1);
  const valueOf = new Map<string, (x: number) => number>();
  for (const [f, tasks] of byFamily) {
    const params = new Map(tasks.map((t, i) => [t.id, f.params[i] ?? []]));
    for (const [id, p] of params) valueOf.set(id, (x) => f.apply(p, x));
    const target = Math.min(COMPOSITIONAL_HELD_OUT, Math.ceil(tasks.length * HELD_OUT_FRACTION));
    let held = 0;
    for (const t of shuffled(
      tasks.filter((t) => !shared.has(t.id)),
      familyRng(seed, layout, f),
    )) {
      if (held === target) break;
      const parts = partsOf(f, params.get(t.id) ?? []);
      if (!parts.every((q) => (trainedUses.get(q) ?? 0) > 1)) continue;
      for (const q of parts) trainedUses.set(q, (trainedUses.get(q) ?? 0) - 1);
      t.heldOut = true;
      held++;
    }
  }
  const tasks = [...byFamily.values()].flat();
  const index = new HeldOutIndex([...tasks.filter((t) => t.heldOut), ...generalisation(tasks)]);
  const kept = tasks.filter((t) => {
    if (t.heldOut) return true;
    const value = valueOf.get(t.id);
    return !value || index.match((x) => (PROBE_INPUTS.includes(x) ? value(x) : undefined)) === null;
  });
  // One shuffle of the whole list so suites do not list families in blocks.
  return shuffled(kept, new Rng(seed));
}
