/// <reference lib="webworker" />
/**
 * The trainer worker: the policy and its optimiser, and what stores and publishes its versions.
 * Each feature lives in `trainer/`; this file merges their handlers into the API it exposes.
 */
import * as Comlink from 'comlink';
import { checkHandlers } from './trainer/check';
import { TrainerContext } from './trainer/context';
import { customRunHandlers } from './trainer/custom-run';
import { pipelineRunHandlers } from './trainer/pipeline-run';
import { policyHandlers } from './trainer/policy';

export type { CustomPublished, CustomRunInit } from './trainer/custom-run';
export type { PipelineRunInit, ResumePoint } from './trainer/pipeline-run';
export type { TrainerInfo, TrainerInit } from './trainer/policy';

const ctx = new TrainerContext();

const api = {
  ...policyHandlers(ctx),
  ...checkHandlers(ctx),
  ...pipelineRunHandlers(ctx),
  ...customRunHandlers(ctx),
};

export type TrainerApi = typeof api;

Comlink.expose(api);
