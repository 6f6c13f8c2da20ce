import type { EvalTask } from '../env/evaluate';
import type { GeneratedTask } from '../env/families';
import type { Level, Task } from '../env/suite';
import { generalisationOf } from '../env/task-kinds';
import type { TaskConfig } from '../config/run-config';

/**
 * Which tasks a run holds out and which its evaluations score (DESIGN §3: users write their own
 * tasks in the page; what a run trains on is `training-tasks.ts`). A run trains on the built-in suite's training tasks, or on a saved suite
 * of the user's (`task.suite`, e.g. "my tasks"); held-out tasks are the built-in suite's
 * in both cases, so that "held-out" always means tasks the run never trained on. The built-in
 * suite is that of the run's task kind (`task.kind`, `env/task-kinds.ts`).
 */

/** A task without what the generator adds (family, program, split); a tool-use task keeps its kind and tests. */
export const plain = ({ id, level, kind, examples, tests, hidden }: Task): Task => ({
  id,
  level,
  ...(kind ? { kind } : {}),
  examples,
  ...(tests ? { tests } : {}),
  hidden,
});

/**
 * The tasks no run may train on, whatever it trains on: the built-in held-out tasks and the
 * generalisation suite, of every level (decontamination keeps relabelled programs that compute
 * one of them out of training).
 */
export function runHeldOutTasks(builtIn: readonly GeneratedTask[]): Task[] {
  return heldOutOf(builtIn).map(plain);
}

/** The built-in held-out tasks and the generalisation suite, as generated (their splits marked). */
export function heldOutOf(builtIn: readonly GeneratedTask[]): GeneratedTask[] {
  return [...builtIn.filter((t) => t.heldOut), ...generalisationOf(builtIn)];
}

/**
 * What an evaluation during a run scores, at `level` (the curriculum's, the run's, or `all`):
 * with the built-in tasks, the level's training and held-out tasks (the training tasks of the
 * compositional split's larger space sampled as a suite's are); with the run's own suite,
 * every task of it as training tasks (the user chose them, whatever their level) and the
 * built-in held-out tasks of the levels the suite has. The generalisation suite's tasks of the
 * same levels follow (marked `generalisation`). A suite of more than `EVAL_TRAINING_TASKS`
 * tasks is scored on that many of them, evenly spaced (`evaluationSample`).
 */
export function runEvaluationTasks(
  s: Pick<TaskConfig, 'suite'>,
  builtIn: readonly GeneratedTask[],
  level: Level | 'all',
): EvalTask[] {
  const general = (keep: (l: Level) => boolean): EvalTask[] =>
    generalisationOf(builtIn)
      .filter((t) => keep(t.level))
      .map((t) => ({ ...plain(t), heldOut: true, generalisation: true }));
  if (!s.suite) {
    const ofLevel = builtIn.filter((t) => level === 'all' || t.level === level);
    const scored = new Set(evaluationSample(ofLevel.filter((t) => !t.heldOut)));
    return [
      ...ofLevel.filter((t) => t.heldOut || scored.has(t)).map((t) => ({ ...plain(t), heldOut: t.heldOut })),
      ...general((l) => level === 'all' || l === level),
    ];
  }
  const levels = new Set(s.suite.tasks.map((t) => t.level));
  return [
    ...evaluationSample(s.suite.tasks).map((t) => ({ ...plain(t), heldOut: false })),
    ...builtIn.filter((t) => t.heldOut && levels.has(t.level)).map((t) => ({ ...plain(t), heldOut: true })),
    ...general((l) => levels.has(l)),
  ];
}

/**
 * The most training tasks of a run's own suite that an evaluation scores. Evaluations run every
 * 10 versions, one at a time: a suite of 20 000 tasks took longer to score than the run took to
 * train the next 10 versions, and no evaluation ever reached the chart. The built-in suite
 * (258 tasks) is scored whole.
 */
export const EVAL_TRAINING_TASKS = 512;

/** At most `max` of `tasks`, evenly spaced in their order (all of them when there are no more). */
export function evaluationSample<T>(tasks: readonly T[], max = EVAL_TRAINING_TASKS): T[] {
  if (tasks.length <= max) return [...tasks];
  return Array.from({ length: max }, (_, i) => tasks[Math.floor((i * tasks.length) / max)] as T);
}
