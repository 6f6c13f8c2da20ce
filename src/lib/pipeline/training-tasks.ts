import type { GeneratedTask } from '../env/families';
import { LEVELS, type Task } from '../env/suite';
import type { TaskConfig } from '../config/run-config';
import { wideToolUseTasks } from '../rl/revise-imitation';
import { plain, runHeldOutTasks } from './run-tasks';

/**
 * The tasks a run of these settings trains on: its own suite's, or the built-in training tasks
 * (with `wide`, on tool-use tasks, the wide families' functions too, checked against every
 * held-out and generalisation task).
 */
export function runTrainingTasks(
  s: Pick<TaskConfig, 'suite' | 'level'> & Partial<Pick<TaskConfig, 'wide'>>,
  builtIn: readonly GeneratedTask[],
): Task[] {
  const pool = s.suite
    ? s.suite.tasks
    : [...builtIn.filter((t) => !t.heldOut), ...wideTrainingTasks(s, builtIn)];
  return pool.filter((t) => !s.level || t.level === s.level).map(plain);
}

/** The wide families' functions a tool-use run trains on beside the built-in tasks (`task.wide`); none otherwise. */
export function wideTrainingTasks(
  s: Pick<TaskConfig, 'suite'> & Partial<Pick<TaskConfig, 'wide'>>,
  builtIn: readonly GeneratedTask[],
): GeneratedTask[] {
  const toolUse = builtIn.some((t) => t.kind === 'tooluse');
  return !s.suite && s.wide && toolUse ? wideToolUseTasks(runHeldOutTasks(builtIn), [...LEVELS]) : [];
}
