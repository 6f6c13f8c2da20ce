import type { PipelineRunInit } from '../../../workers/trainer.worker';
import { generateTasks, type GeneratedTask } from '../env/families';
import { CodeJobSource } from '../pipeline/code-workload';
import { Pipeline, type PipelineHooks } from '../pipeline/controller';
import { pipelineConfigOf, settingsToJson, type RunSettings } from '../pipeline/run-settings';
import { runHeldOutTasks, runTrainingTasks } from '../pipeline/run-tasks';
import type { Lane } from '../pipeline/events';
import type { PipelineTrainerPort, PlayedGroup, RolloutPort } from '../pipeline/types';
import type { HindsightSnapshot } from '../rl/hindsight';
import type { RunProgress } from '../storage/db';

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

/** A new run's id: its kind ('run' for the code-writing policy, 'custom'), then its start time, readable and sortable. */
export function newRunId(at = new Date(), prefix: 'run' | 'custom' = 'run'): string {
  return `${prefix}-${at.toISOString().replace(/[:.]/g, '-')}`;
}

/** How the trainer stores a run: its id, its settings as JSON, and retention. */
export function runInit(runId: string, s: RunSettings): PipelineRunInit {
  return {
    runId,
    name: runId,
    config: settingsToJson(s),
    keepVersions: s.keepVersions,
    milestoneEvery: s.milestoneEvery,
    keepConsumed: s.keepConsumed,
  };
}

/** The job source of a run with `settings`, where its saved `progress` left it (a resume, a Show). */
export function jobSourceOf(
  settings: RunSettings,
  progress: RunProgress | undefined,
  suite: readonly GeneratedTask[] = generateTasks(BUILT_IN_SEED),
): CodeJobSource {
  const source = new CodeJobSource(runTrainingTasks(settings, suite), settings.code, runHeldOutTasks(suite));
  source.restore(progress);
  return source;
}

/** A code run's workload: what the pipeline is assembled from. */
export interface CodeWorkload {
  runId: string;
  settings: RunSettings;
  /** The suite the run's tasks are drawn from when it has none of its own (the built-in one by default). */
  suite?: readonly GeneratedTask[];
  /** Where a resumed run continues from (null or absent: a new run). */
  restored?: Restored | null;
}

/** How the assembled pipeline reaches its trainer and its rollouts. */
export interface AssemblyPorts {
  /** The trainer (a port that reads the run's progress may read it lazily: it is called only once the pipeline trains). */
  trainer: PipelineTrainerPort;
  hooks: PipelineHooks;
  /**
   * In-process rollout workers, one lane each (`rollout-i`), added at once; the page adds its
   * workers later, as its pool starts them (`run/rollout-pool.ts`).
   */
  rollouts?: readonly RolloutPort[];
}

/** An assembled code run: the controller, its job source, and the rollout lanes. */
export interface AssembledPipeline {
  pipeline: Pipeline;
  source: CodeJobSource;
  lanes: Lane[];
}

/** The lanes of a run with `workers` rollout workers. */
export const rolloutLanes = (workers: number): Lane[] =>
  Array.from({ length: workers }, (_, i) => `rollout-${i}` as const);

/**
 * Assembles a code run's pipeline from its workload: the job source (restored where a resume
 * left it, its hindsight pool included), the controller with the run's config, the trainer port,
 * and any in-process rollout ports. Nothing here starts a worker: usable in node and in the page.
 */
export function assemblePipeline(w: CodeWorkload, ports: AssemblyPorts): AssembledPipeline {
  const restored = w.restored ?? null;
  const source = jobSourceOf(w.settings, restored?.progress, w.suite);
  if (restored?.hindsight) source.hindsight.restore(restored.hindsight);
  const lanes = rolloutLanes(w.settings.workers);
  const pipeline = new Pipeline(
    pipelineConfigOf(w.settings),
    source,
    ports.trainer,
    w.runId,
    ports.hooks,
    restored ?? undefined,
  );
  (ports.rollouts ?? []).forEach((port, i) => {
    const lane = `rollout-${i}` as const;
    pipeline.addWorker(lane, port, lane);
  });
  return { pipeline, source, lanes };
}
