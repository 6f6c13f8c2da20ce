import type { GeneratedTask } from '../env/families';
import { runBuiltInTasks } from '../env/task-kinds';
import { CodeJobSource, pipelineConfigOf } from '../pipeline/code-workload';
import { Pipeline, type PipelineHooks } from '../pipeline/controller';
import { CustomJobSource, customPipelineConfig, type CustomTrajectory } from '../custom/workload';
import type { RunConfig } from '../config/run-config';
import { runHeldOutTasks } from '../pipeline/run-tasks';
import { runTrainingTasks } from '../pipeline/training-tasks';
import type { Lane } from '../pipeline/events';
import type {
  EpisodeOutcome,
  PipelineTrainerPort,
  PlayedGroup,
  RolloutPort,
  RunProgress,
} from '../pipeline/types';
import type { TokenBatch } from '../rl/batch';
import type { CustomTrainConfig } from '../custom/config';
import type { CustomBatch } from '../custom/trainer';
import type { HindsightSnapshot } from '../rl/hindsight';
import type { Trajectory } from '../rl/trajectory';

import { BUILT_IN_SEED } from '../env/suite-entries';

/** Seed of the page's built-in task suite (what a run without a suite of its own trains on). */
export { BUILT_IN_SEED };

/** Where a resumed run continues from (read from the store by the caller). */
export interface Restored {
  version: number;
  nextSeq: number;
  nextJobId: number;
  groups: PlayedGroup[];
  /** Stored seqs no group takes (attempts a retry superseded), marked consumed with the next version. */
  superseded: readonly number[];
  progress: RunProgress | undefined;
  /** The run's hindsight pool as last saved (null: it refills from the resumed run's programs). */
  hindsight: HindsightSnapshot | null;
}

export { newRunId, runInit } from './run-init';

/** The job source of a run with `settings`, where its saved `progress` left it (a resume, a Show). */
export function jobSourceOf(
  settings: RunConfig,
  progress: RunProgress | undefined,
  suite: readonly GeneratedTask[] = runBuiltInTasks(settings.task),
): CodeJobSource {
  const source = new CodeJobSource(runTrainingTasks(settings.task, suite), settings, runHeldOutTasks(suite));
  source.restore(progress);
  return source;
}

/** A code run's workload: what the pipeline is assembled from. */
export interface CodeWorkload {
  kind?: 'code';
  runId: string;
  settings: RunConfig;
  /** The suite the run's tasks are drawn from when it has none of its own (the built-in one by default). */
  suite?: readonly GeneratedTask[];
  /** Where a resumed run continues from (null or absent: a new run). */
  restored?: Restored | null;
}

/** A custom environment's training: what its pipeline is assembled from. */
export interface CustomWorkload {
  kind: 'custom';
  runId: string;
  config: CustomTrainConfig;
  /** Observation length of the environment (the MLP's inputs). */
  inputs: number;
  /** Where a resumed training continues from (its version and next job id; a new one: 0 and 0). */
  restored: { version: number; nextJobId: number };
}

/** How the assembled pipeline reaches its trainer and its rollouts. */
export interface AssemblyPorts<B = TokenBatch, T extends EpisodeOutcome = Trajectory> {
  /** The trainer (a port that reads the run's progress may read it lazily: it is called only once the pipeline trains). */
  trainer: PipelineTrainerPort<B>;
  hooks: PipelineHooks<T>;
  /**
   * In-process rollout workers, one lane each (`rollout-i`), added at once; the page adds its
   * workers later, as its pool starts them (`run/rollout-pool.ts`).
   */
  rollouts?: readonly RolloutPort<T>[];
}

/** An assembled run: the controller, its job source, and the rollout lanes. */
export interface Assembled<B, T extends EpisodeOutcome, S> {
  pipeline: Pipeline<B, T>;
  source: S;
  lanes: Lane[];
}

/** An assembled code run. */
export type AssembledPipeline = Assembled<TokenBatch, Trajectory, CodeJobSource>;
/** An assembled custom environment's training. */
export type AssembledCustom = Assembled<CustomBatch, CustomTrajectory, CustomJobSource>;

/** The lanes of a run with `workers` rollout workers. */
export const rolloutLanes = (workers: number): Lane[] =>
  Array.from({ length: workers }, (_, i) => `rollout-${i}` as const);

/**
 * Assembles a run's pipeline from its workload. A code run: the job source (restored where a
 * resume left it, its hindsight pool included) and the controller with the run's config. A custom
 * environment: its job source (every job a group of episodes) and the controller with the
 * training's config, from the version it resumes. Then the trainer port and any in-process rollout
 * ports. Nothing here starts a worker: usable in node and in the page.
 */
export function assemblePipeline(w: CodeWorkload, ports: AssemblyPorts): AssembledPipeline;
export function assemblePipeline(
  w: CustomWorkload,
  ports: AssemblyPorts<CustomBatch, CustomTrajectory>,
): AssembledCustom;
export function assemblePipeline(
  w: CodeWorkload | CustomWorkload,
  ports: AssemblyPorts | AssemblyPorts<CustomBatch, CustomTrajectory>,
): AssembledPipeline | AssembledCustom {
  // The overloads pair each workload with its ports.
  if (w.kind === 'custom') return assembleCustom(w, ports as AssemblyPorts<CustomBatch, CustomTrajectory>);
  return assembleCode(w, ports as AssemblyPorts);
}

function assembleCode(w: CodeWorkload, ports: AssemblyPorts): AssembledPipeline {
  const restored = w.restored ?? null;
  const source = jobSourceOf(w.settings, restored?.progress, w.suite);
  if (restored?.hindsight) source.hindsight.restore(restored.hindsight);
  const pipeline = new Pipeline(
    pipelineConfigOf(w.settings),
    source,
    ports.trainer,
    w.runId,
    ports.hooks,
    restored ?? undefined,
  );
  return { pipeline, source, lanes: addRollouts(pipeline, w.settings.pipeline.workers, ports.rollouts) };
}

function assembleCustom(
  w: CustomWorkload,
  ports: AssemblyPorts<CustomBatch, CustomTrajectory>,
): AssembledCustom {
  const source = new CustomJobSource(w.inputs, w.config.gamma);
  const pipeline = new Pipeline<CustomBatch, CustomTrajectory>(
    customPipelineConfig(w.config),
    source,
    ports.trainer,
    w.runId,
    ports.hooks,
    { ...w.restored, nextSeq: 0, groups: [] },
  );
  return { pipeline, source, lanes: addRollouts(pipeline, w.config.workers, ports.rollouts) };
}

/** The run's lanes; in-process rollout ports take the first ones at once. */
function addRollouts<T extends EpisodeOutcome>(
  pipeline: Pipeline<unknown, T>,
  workers: number,
  rollouts: readonly RolloutPort<T>[] = [],
): Lane[] {
  rollouts.forEach((port, i) => {
    const lane = `rollout-${i}` as const;
    pipeline.addWorker(lane, port, lane);
  });
  return rolloutLanes(workers);
}
