import { describe, expect, it } from 'vitest';
import { splitOf } from '../env/evaluate';
import { generateTasks } from '../env/families';
import { generalisationTasks } from '../env/generalisation';
import { generateToolUseTasks, toolUseGeneralisationTasks } from '../env/tooluse';
import { builtInTasks, runBuiltInTasks } from '../env/task-kinds';
import type { Task, TaskSuite } from '../env/suite';
import { CodeJobSource } from './code-workload';
import {
  defaultRunConfig,
  runConfigFromJson,
  runConfigToJson,
  validateRunConfig,
  withOverrides,
  withTaskKind,
  type RunConfig,
} from '../config/run-config';
import { EVAL_TRAINING_TASKS, evaluationSample, runEvaluationTasks, runHeldOutTasks } from './run-tasks';
import { runTrainingTasks } from './training-tasks';
import { settingsFromShare, shareParam } from '../config/share-link';

const builtIn = generateTasks(1);
const linear = (id: string, a: number, b: number, level: Task['level'] = 'medium'): Task => ({
  id,
  level,
  examples: [1, 2, 4].map((x) => ({ input: x, output: a * x + b })),
  hidden: [0, 3, 5].map((x) => ({ input: x, output: a * x + b })),
});
const mine: TaskSuite = {
  name: 'my tasks',
  tasks: [linear('triple-minus-two', 3, -2), linear('hard-one', 5, 1, 'hard')],
};

describe("a run's tasks", () => {
  it('come from the compositional split with task.split, its training tasks scored on a sample', () => {
    const settings = withOverrides(defaultRunConfig(), { task: { split: 'compositional' } });
    const tasks = runBuiltInTasks(settings.task);
    expect(tasks).toEqual(builtInTasks('examples', 1, 'compositional'));
    expect(runBuiltInTasks(defaultRunConfig().task)).toEqual(builtIn);
    const scored = runEvaluationTasks(settings.task, tasks, 'all');
    const heldOut = tasks.filter((t) => t.heldOut).map((t) => t.id);
    expect(scored.filter((t) => t.heldOut && !t.generalisation).map((t) => t.id)).toEqual(heldOut);
    expect(scored.filter((t) => !t.heldOut)).toHaveLength(EVAL_TRAINING_TASKS);
    expect(tasks.filter((t) => !t.heldOut).length).toBeGreaterThan(EVAL_TRAINING_TASKS);
    // The families split's levels are scored whole, as before.
    expect(runEvaluationTasks({ suite: null }, builtIn, 'all').filter((t) => !t.heldOut)).toHaveLength(
      builtIn.filter((t) => !t.heldOut).length,
    );
  });

  it('add the wide functions on tool-use tasks with task.wide, none computing a held-out task', () => {
    const tool = generateToolUseTasks(1);
    const plainTraining = runTrainingTasks({ suite: null, level: 'easy' }, tool);
    const wide = runTrainingTasks({ suite: null, level: 'easy', wide: true }, tool);
    expect(wide.length).toBeGreaterThan(plainTraining.length + 100);
    expect(wide.slice(0, plainTraining.length)).toEqual(plainTraining);
    // No training function gives a held-out or generalisation task's outputs on its shown and hidden inputs.
    const outputs = (t: Task) => JSON.stringify([...t.examples, ...t.hidden].map((e) => [e.input, e.output]));
    const held = new Set(runHeldOutTasks(tool).map(outputs));
    expect(wide.filter((t) => held.has(outputs(t)))).toEqual([]);
    // The examples kind, and a run's own suite, are left as they are.
    expect(runTrainingTasks({ suite: null, level: 'easy', wide: true }, builtIn)).toEqual(
      runTrainingTasks({ suite: null, level: 'easy' }, builtIn),
    );
    expect(runTrainingTasks({ suite: mine, level: null, wide: true }, tool)).toHaveLength(2);
  });

  it('are the built-in training tasks by default, never a held-out one', () => {
    const s = defaultRunConfig();
    const train = runTrainingTasks(s.task, builtIn);
    const held = new Set(builtIn.filter((t) => t.heldOut).map((t) => t.id));
    expect(train).toHaveLength(builtIn.length - held.size);
    expect(train.some((t) => held.has(t.id))).toBe(false);
    expect(runTrainingTasks({ ...s.task, level: 'easy' }, builtIn).every((t) => t.level === 'easy')).toBe(
      true,
    );
    expect(Object.keys(train[0] ?? {}).sort()).toEqual(['examples', 'hidden', 'id', 'level']);
  });

  it("are the user's suite when one is chosen, filtered by the run's level", () => {
    const s = withOverrides(defaultRunConfig(), { task: { suite: mine } });
    expect(runTrainingTasks(s.task, builtIn).map((t) => t.id)).toEqual(['triple-minus-two', 'hard-one']);
    expect(runTrainingTasks({ ...s.task, level: 'hard' }, builtIn).map((t) => t.id)).toEqual(['hard-one']);
  });

  it("are evaluated whole, with the built-in held-out tasks of the suite's levels", () => {
    const tasks = runEvaluationTasks({ suite: mine }, builtIn, 'easy');
    const train = tasks.filter((t) => !t.heldOut);
    const held = tasks.filter((t) => splitOf(t) === 'heldOut');
    expect(train.map((t) => t.id)).toEqual(['triple-minus-two', 'hard-one']);
    const want = builtIn.filter((t) => t.heldOut && (t.level === 'medium' || t.level === 'hard'));
    expect(held.map((t) => t.id)).toEqual(want.map((t) => t.id));
    expect(held.length).toBeGreaterThan(0);
    // The built-in suite: the level's tasks with their split.
    const easy = runEvaluationTasks({ suite: null }, builtIn, 'easy');
    expect(easy.filter((t) => !t.generalisation).map((t) => [t.id, t.heldOut])).toEqual(
      builtIn.filter((t) => t.level === 'easy').map((t) => [t.id, t.heldOut]),
    );
    const general = generalisationTasks(builtIn);
    expect(runEvaluationTasks({ suite: null }, builtIn, 'all')).toHaveLength(builtIn.length + general.length);
    // The generalisation suite of the level, as its own split (and of the own suite's levels).
    expect(easy.filter((t) => splitOf(t) === 'generalisation').map((t) => t.id)).toEqual(
      general.filter((t) => t.level === 'easy').map((t) => t.id),
    );
    expect(tasks.filter((t) => t.generalisation).map((t) => t.id)).toEqual(
      general.filter((t) => t.level !== 'easy').map((t) => t.id),
    );
  });

  it('score a large suite of their own on an evenly spaced sample of it, the held-out tasks whole', () => {
    const many = {
      name: 'many',
      tasks: Array.from({ length: 20_000 }, (_, i) => ({
        id: `t${i}`,
        level: 'easy' as const,
        examples: [{ input: 1, output: i }],
        hidden: [{ input: 2, output: i }],
      })),
    };
    const tasks = runEvaluationTasks({ suite: many }, builtIn, 'all');
    const own = tasks.filter((t) => !t.heldOut);
    expect(own).toHaveLength(EVAL_TRAINING_TASKS);
    expect(new Set(own.map((t) => t.id)).size).toBe(EVAL_TRAINING_TASKS);
    expect(own[0]?.id).toBe('t0');
    expect(own.at(-1)?.id).toBe(`t${Math.floor((511 * 20_000) / 512)}`);
    const heldOut = builtIn.filter((t) => t.heldOut && t.level === 'easy');
    expect(tasks.filter((t) => splitOf(t) === 'heldOut')).toHaveLength(heldOut.length);
    expect(evaluationSample([1, 2, 3], 5)).toEqual([1, 2, 3]);
  });

  it('never include what the run must not train on: held-out and generalisation tasks of every level', () => {
    const guard = runHeldOutTasks(builtIn);
    const ids = new Set(guard.map((t) => t.id));
    expect(guard).toHaveLength(builtIn.filter((t) => t.heldOut).length + generalisationTasks(builtIn).length);
    expect(runTrainingTasks(defaultRunConfig().task, builtIn).some((t) => ids.has(t.id))).toBe(false);
    expect(new Set(guard.map((t) => t.level))).toEqual(new Set(['easy', 'medium', 'hard']));
  });

  it('start a job source whose curriculum walks their levels', () => {
    const source = new CodeJobSource(runTrainingTasks({ suite: mine, level: null }, builtIn));
    expect(source.curriculum.level).toBe('medium');
    expect(source.nextTask().task.id).toBe('triple-minus-two');
  });

  it('are checked: a broken suite, a reserved id or no task at the level is refused with a message', () => {
    const ok = withOverrides(defaultRunConfig(), { task: { suite: mine } });
    const withTask = (task: Partial<RunConfig['task']>) => ({ ...ok, task: { ...ok.task, ...task } });
    expect(() => validateRunConfig(ok)).not.toThrow();
    const noHidden = { ...mine, tasks: [{ ...linear('t', 1, 1), hidden: [] }] };
    expect(() => validateRunConfig(withTask({ suite: noHidden }))).toThrow(
      /task\.suite: \$\.tasks\[0\]\.hidden: must not be empty/,
    );
    const reserved = { ...mine, tasks: [linear('hindsight:1,2', 1, 1)] };
    expect(() => validateRunConfig(withTask({ suite: reserved }))).toThrow(/reserved for relabelled tasks/);
    expect(() => validateRunConfig(withTask({ level: 'easy' }))).toThrow(
      /task\.suite \("my tasks"\) has no easy task/,
    );
    expect(() => validateRunConfig(withTask({ suite: { name: 'empty', tasks: [] } }))).toThrow(
      /task\.suite: \$\.tasks: must not be empty/,
    );
  });

  it('are stored with the run and travel in a share link', async () => {
    const s = withOverrides(defaultRunConfig(), { task: { suite: mine } });
    const stored = runConfigFromJson(
      JSON.parse(JSON.stringify(runConfigToJson(s))) as Record<string, unknown>,
    );
    expect(stored.task.suite).toEqual(mine);
    expect((await settingsFromShare(await shareParam(s))).task.suite).toEqual(mine);
    // A run stored before the field trains on the built-in tasks, as it did.
    const old = JSON.parse(JSON.stringify(runConfigToJson(defaultRunConfig()))) as Record<string, unknown>;
    delete (old.task as Record<string, unknown>).suite;
    expect(runConfigFromJson(old).task.suite).toBeNull();
    // ... and one stored in the older flat form with its own tasks keeps them.
    expect(runConfigFromJson({ workers: 2, tasks: mine }).task.suite).toEqual(mine);
  });
});

describe("a tool-use run's tasks", () => {
  const toolUse = generateToolUseTasks(1);

  it('are the built-in tool-use tasks, keeping their kind and tests, with their own held-out ones', () => {
    const s = withTaskKind(defaultRunConfig(), 'tooluse');
    const train = runTrainingTasks(s.task, toolUse);
    expect(train).toHaveLength(toolUse.filter((t) => !t.heldOut).length);
    expect(train.every((t) => t.kind === 'tooluse' && t.tests?.length === 8)).toBe(true);
    expect(Object.keys(train[0] ?? {}).sort()).toEqual([
      'examples',
      'hidden',
      'id',
      'kind',
      'level',
      'tests',
    ]);
    const held = runHeldOutTasks(toolUse);
    expect(held).toHaveLength(
      toolUse.filter((t) => t.heldOut).length + toolUseGeneralisationTasks(toolUse).length,
    );
    expect(held.every((t) => t.kind === 'tooluse')).toBe(true);
    const evals = runEvaluationTasks(s.task, toolUse, 'easy');
    expect(evals.filter((t) => splitOf(t) === 'generalisation').length).toBeGreaterThan(0);
    expect(evals.every((t) => t.kind === 'tooluse' && t.level === 'easy')).toBe(true);
  });

  it('train from a job source that never draws a held-out one', () => {
    const s = withTaskKind(defaultRunConfig(), 'tooluse');
    validateRunConfig(s);
    expect(s.env.maxTurns).toBe(4);
    // Relabelled episodes submit at once: on one shown example they would teach guessing.
    expect(s.hindsight).toMatchObject({ samplesPerBatch: 0, taskFraction: 0 });
    const source = new CodeJobSource(runTrainingTasks(s.task, toolUse), s, runHeldOutTasks(toolUse));
    const held = new Set(toolUse.filter((t) => t.heldOut).map((t) => t.id));
    for (let i = 0; i < 20; i++) {
      const { task } = source.nextTask();
      expect(held.has(task.id)).toBe(false);
      expect(task.kind).toBe('tooluse');
    }
  });
});
