/// <reference lib="webworker" />
/**
 * A rollout worker: a policy replica and a QuickJS sandbox that play episodes, for a pipeline run,
 * a custom environment or an evaluation. Each feature lives in `rollout/`; this file merges their
 * handlers into the API it exposes.
 */
import * as Comlink from 'comlink';
import { RolloutContext } from './rollout/context';
import { customEnvHandlers } from './rollout/custom-env';
import { engineRunHandlers } from './rollout/engine-run';
import { evaluateHandlers } from './rollout/evaluate';
import { setupHandlers } from './rollout/setup';

export type { CustomRunJoin } from './rollout/custom-env';
export type { EngineRunInit, RolloutStats } from './rollout/engine-run';
export type {
  AgentName,
  EvalRequest,
  GreedyExportRequest,
  GreedyPlayed,
  GreedyPlayRequest,
} from './rollout/evaluate';
export { DEFAULT_ROLLOUT_BACKENDS, type RolloutInit } from './rollout/setup';

const ctx = new RolloutContext();

const api = {
  ...setupHandlers(ctx),
  ...evaluateHandlers(ctx),
  ...engineRunHandlers(ctx),
  ...customEnvHandlers(ctx),
};

export type RolloutApi = typeof api;

Comlink.expose(api);
