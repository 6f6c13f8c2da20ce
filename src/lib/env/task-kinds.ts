import { generateCompositionalTasks } from './compositional';
import { DEFAULT_ENV_CONFIG, TOOLUSE_ENV_CONFIG, type EnvConfig } from './config';
import { EXAMPLES_LAYOUT, generateTasks, type GeneratedTask } from './families';
import { generalisationTasks } from './generalisation';
import { BUILT_IN_SEED } from './suite-entries';
import { kindOf, type TaskKind, type TaskSplit } from './suite';
import { generateToolUseTasks, TOOLUSE_LAYOUT, toolUseGeneralisationTasks } from './tooluse';

/** The built-in tasks of a kind (DESIGN §3, §3.1), with their split. */
export function builtInTasks(kind: TaskKind, seed: number, split: TaskSplit = 'families'): GeneratedTask[] {
  if (split === 'compositional')
    return kind === 'tooluse'
      ? generateCompositionalTasks(TOOLUSE_LAYOUT, seed, toolUseGeneralisationTasks)
      : generateCompositionalTasks(EXAMPLES_LAYOUT, seed, generalisationTasks);
  return kind === 'tooluse' ? generateToolUseTasks(seed) : generateTasks(seed);
}

/** The built-in tasks a run of these task settings uses: its kind's, seed `BUILT_IN_SEED`, its split. */
export function runBuiltInTasks(task: { kind: TaskKind; split?: TaskSplit }): GeneratedTask[] {
  return builtInTasks(task.kind, BUILT_IN_SEED, task.split ?? 'families');
}

/** The generalisation tasks of built-in tasks of either kind (or both): each kind's own. */
export function generalisationOf(tasks: readonly GeneratedTask[]): GeneratedTask[] {
  const examples = tasks.filter((t) => kindOf(t) === 'examples');
  const toolUse = tasks.filter((t) => kindOf(t) === 'tooluse');
  return [
    ...(examples.length ? generalisationTasks(examples) : []),
    ...(toolUse.length ? toolUseGeneralisationTasks(toolUse) : []),
  ];
}

/** The environment a kind's tasks are meant for: tool-use tasks take four turns and pay no `ranOk`. */
export function envConfigOf(kind: TaskKind): EnvConfig {
  return kind === 'tooluse' ? TOOLUSE_ENV_CONFIG : DEFAULT_ENV_CONFIG;
}

/** The env a run's greedy play uses, as its evaluator's: a tool-use run's own, else its kind's. */
export function playEnvOf(s: { task: { kind: TaskKind }; env: EnvConfig }): EnvConfig {
  return s.task.kind === 'tooluse' ? s.env : envConfigOf(s.task.kind);
}
