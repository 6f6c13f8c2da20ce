import { RolloutBridge } from '../bridge/rollout-bridge';
import type { EvalPoint } from '../pipeline/types';
import { LabDbConnection } from '../storage/db';
import { CODE_RUNS, RunCatalog } from './catalog';
import { CodeRun } from './code-run';
import { Evaluations } from './evaluations';
import type { PipelineSession, RunTrainer } from './session';

/** What the page's run view does for the run layer. */
export interface RunViewHooks {
  notify(message: string): void;
  scored(runId: string, point: EvalPoint): void;
  /** The stopped session's last figures. */
  afterStop(session: PipelineSession): Promise<void>;
  /** The run list, read again once a run has ended. */
  afterEnd(): Promise<void>;
}

/**
 * The page's code runs, assembled for the browser: one storage connection (a newer page's tab
 * closes it: the run fails and says why), the catalog with its Web Locks, the code run with its
 * rollout workers, and the evaluations' worker.
 */
export function browserCodeRuns(
  trainer: RunTrainer,
  view: RunViewHooks,
): { catalog: RunCatalog; run: CodeRun; evaluations: Evaluations } {
  const connection = new LabDbConnection({
    blocked: () =>
      view.notify('Storage is waiting for another tab of this page, an older version, to close.'),
    // A run cannot go on without its storage: it stops, and this message stays.
    closed: (message) => void run.fail(message, true),
  });
  const catalog = new RunCatalog(CODE_RUNS, connection);
  const database = () => catalog.database();
  const run: CodeRun = new CodeRun({
    trainer,
    database,
    hold: (runId, until) => catalog.hold(runId, until),
    createRollout: (name, onCrash) => new RolloutBridge(name, onCrash),
    afterStop: (s) => view.afterStop(s),
    afterEnd: () => view.afterEnd(),
  });
  const evaluations = new Evaluations({
    database,
    createEvaluator: (onCrash) => new RolloutBridge('evaluator', onCrash),
    clock: () => run.clock(),
    scored: (runId, point) => view.scored(runId, point),
    notice: (m) => view.notify(m),
  });
  return { catalog, run, evaluations };
}
