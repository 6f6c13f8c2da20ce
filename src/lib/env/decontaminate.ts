import type { Task } from './suite';

/**
 * Decontamination, as training sets are cleaned against test sets: a task made for training (a
 * relabelled one, from a program the policy wrote or a variant of it) must not compute what a
 * held-out or generalisation task asks for. The check is on outputs at the held-out task's own
 * inputs (examples and hidden tests), not on program text: `x-7` and `x+-7` are the same task.
 */

/**
 * Inputs at which a relabelled program is run beside its task's own, so that it can be compared
 * with every held-out and generalisation task of the built-in suite (their inputs are all here).
 */
export const PROBE_INPUTS: readonly number[] = Array.from({ length: 14 }, (_, i) => i);

/** A program's output at an input: a number, null (not a number), or undefined (not run there). */
export type OutputAt = (input: number) => number | null | undefined;

/** The held-out tasks of a run, indexed by their outputs at their own inputs. */
export class HeldOutIndex {
  /** Per distinct list of inputs (examples, then hidden): outputs joined → task id. */
  private readonly groups: { inputs: number[]; byOutputs: Map<string, string> }[] = [];
  /** Tasks with an input outside `PROBE_INPUTS`: a relabelled program is not run there. */
  readonly unchecked: string[] = [];

  constructor(tasks: readonly Task[]) {
    const byInputs = new Map<string, { inputs: number[]; byOutputs: Map<string, string> }>();
    for (const t of tasks) {
      const all = [...t.examples, ...(t.tests ?? []), ...t.hidden];
      const inputs = all.map((e) => e.input);
      if (!inputs.every((x) => PROBE_INPUTS.includes(x))) this.unchecked.push(t.id);
      const key = inputs.join(',');
      const group = byInputs.get(key) ?? { inputs, byOutputs: new Map<string, string>() };
      byInputs.set(key, group);
      const outputs = all.map((e) => e.output).join(',');
      if (!group.byOutputs.has(outputs)) group.byOutputs.set(outputs, t.id);
    }
    this.groups.push(...byInputs.values());
  }

  /** Held-out tasks indexed. */
  get size(): number {
    return this.groups.reduce((n, g) => n + g.byOutputs.size, 0);
  }

  /**
   * The id of a held-out task whose every output `outputAt` reproduces at that task's inputs, or
   * null when none does (tasks at inputs `outputAt` does not know are skipped).
   */
  match(outputAt: OutputAt): string | null {
    for (const g of this.groups) {
      const ys = g.inputs.map(outputAt);
      if (ys.some((y) => y === undefined || y === null)) continue;
      const id = g.byOutputs.get(ys.join(','));
      if (id !== undefined) return id;
    }
    return null;
  }
}
