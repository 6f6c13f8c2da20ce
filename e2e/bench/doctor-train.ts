/**
 * One recorded run of `doctor-node.ts`: the learn bench's training in node (as `learn-node.ts`
 * assembles it: wasm, η 0, one worker, easy level, no greedy evaluations) with an arm's settings,
 * keeping what the page's doctor reads at each step: the step report, the programs written since
 * the last step, the curriculum, and a step refused for a non-finite loss.
 */
import * as tf from '@tensorflow/tfjs';
import { defaultRunConfig, withOverrides } from '../../src/lib/config/run-config.ts';
import { overridesFromSetList } from '../../src/lib/config/set-list.ts';
import { suiteTask } from '../../src/lib/env/families.ts';
import type { TaskSuite } from '../../src/lib/env/suite.ts';
import { builtInTasks } from '../../src/lib/env/task-kinds.ts';
import type { PipelineTrainerPort, RolloutPort, StepReport } from '../../src/lib/pipeline/types.ts';
import type { Weights } from '../../src/lib/policy/model.ts';
import { scheduledRate, trainerConfigOf } from '../../src/lib/rl/learner-config.ts';
import type { TokenBatch } from '../../src/lib/rl/batch.ts';
import { PolicyTrainer } from '../../src/lib/rl/trainer.ts';
import { ppoUpdate } from '../../src/lib/rl/update.ts';
import { assemblePipeline } from '../../src/lib/run/pipeline.ts';
import { CachedSandbox } from '../../src/lib/sandbox/cache.ts';
import { createNodeQuickJS } from '../../src/lib/sandbox/quickjs-node.ts';
import type { ProgramWritten } from '../../src/lib/stats/doctor.ts';
import { isRefusedStep, lastProgram } from '../../src/lib/stats/training-doctor.ts';
import type { Arm, RunRecord } from './doctor-node.ts';
import { nodeEngines, useBackend, withSets } from './node-kit.ts';

/** Trains `arm` with `seed` until `seconds` of training or `maxVersions`, recording the series. */
export async function trainRecorded(
  arm: Arm,
  seed: number,
  limits: { seconds: number; maxVersions: number },
): Promise<RunRecord> {
  const base = defaultRunConfig(2);
  // The learn bench's run (η 0, easy), the arm's changes, then the command line's `--set`s.
  const armed = withOverrides(
    { ...base, seed, pipeline: { ...base.pipeline, eta: 0 }, task: { ...base.task, level: 'easy' } },
    overridesFromSetList(arm.sets, base),
  );
  const builtIn = builtInTasks('examples', 1);
  // A level too easy: the easy level's constant tasks alone.
  const suite: TaskSuite | null = arm.constantsOnly
    ? {
        name: 'easy constants',
        tasks: builtIn
          .filter((t) => t.level === 'easy' && !t.heldOut && t.family === 'constant')
          .map(suiteTask),
      }
    : null;
  const settings = withSets({ ...armed, task: { ...armed.task, suite } });

  await useBackend('wasm');

  const learner = settings.learner;
  const sandbox = new CachedSandbox(await createNodeQuickJS());
  const trainer = new PolicyTrainer(settings.policy.model, trainerConfigOf(learner, settings.seed));
  const snapshot = (): Weights => new Map([...trainer.params].map(([k, v]) => [k, tf.clone(v)]));
  const engines = nodeEngines(
    1,
    sandbox,
    {
      args: settings.policy.model,
      rows: settings.pipeline.slotsPerWorker * learner.groupSize,
      interruptEveryTokens: settings.pipeline.interruptEveryTokens,
      temperature: settings.policy.temperature,
      seed: settings.seed,
    },
    (w) => tf.dispose([...w.values()]),
  );
  const publish = (v: number) => {
    for (const e of engines) e.offer(v, snapshot(), performance.now());
  };

  const t0 = performance.now();
  const record: RunRecord = { arm: arm.name, seed, settings, steps: [], refused: [], seconds: 0 };
  let programs: ProgramWritten[] = [];
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));

  const trainerPort: PipelineTrainerPort = {
    async trainAndPublish(batch: TokenBatch, info) {
      const startedAt = performance.now();
      const metrics = await ppoUpdate(trainer, batch, {
        updates: learner.updatesPerBatch,
        rate: scheduledRate(learner, info.fromVersion),
      });
      const version = info.fromVersion + 1;
      publish(version);
      return { version, metrics, startedAt, publishedAt: performance.now() };
    },
  };
  const { pipeline, source } = assemblePipeline(
    { runId: `doctor-${arm.name}`, settings, suite: builtIn },
    {
      trainer: trainerPort,
      hooks: {
        onPlayed: (_job, group) => {
          if (group.status === 'done') programs.push(...group.trajectories.map(lastProgram));
        },
        onStep: (report: StepReport) => {
          record.steps.push({ report, programs, curriculum: source.curriculum.view() });
          programs = [];
          const seconds = (performance.now() - t0) / 1000;
          if (seconds >= limits.seconds || report.version >= limits.maxVersions) finish();
        },
        // A refused step stops the run: the doctor reads it as the page does.
        onError: (message) => {
          if (isRefusedStep(message)) record.refused.push(pipeline.version);
          else console.error(`# run failed: ${message}`);
          finish();
        },
      },
    },
  );
  publish(0);
  engines.forEach((e, i) => {
    const port: RolloutPort = { play: (job) => e.play(job), abort: async (id) => e.abort(id) };
    pipeline.addWorker(`rollout-${i}`, port, `rollout-${i}` as const);
  });
  pipeline.start();
  try {
    await done;
  } finally {
    pipeline.stop();
    await pipeline.trainerIdle();
  }
  record.seconds = (performance.now() - t0) / 1000;
  for (const e of engines) e.dispose();
  sandbox.dispose?.();
  return record;
}
