import type { PipelineRunInit } from '../../../workers/trainer.worker';
import { runConfigToJson, type RunConfig } from '../config/run-config';

/**
 * A run's id and how the trainer stores it: what a run needs before its pipeline is assembled
 * (`run/pipeline`, a chunk the page fetches apart from its main bundle).
 */

/** A new run's id: its kind ('run' for the code-writing policy, 'custom'), then its start time, readable and sortable. */
export function newRunId(at = new Date(), prefix: 'run' | 'custom' = 'run'): string {
  return `${prefix}-${at.toISOString().replace(/[:.]/g, '-')}`;
}

/** How the trainer stores a run: its id, its settings as JSON, and retention. */
export function runInit(runId: string, s: RunConfig): PipelineRunInit {
  return {
    runId,
    name: runId,
    config: runConfigToJson(s),
    keepVersions: s.storage.keepVersions,
    milestoneEvery: s.storage.milestoneEvery,
    keepConsumed: s.storage.keepConsumed,
  };
}
