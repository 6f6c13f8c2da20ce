import { RolloutBridge } from '../bridge/rollout-bridge';
import type { EvalPoint } from '../pipeline/types';
import { LabDbConnection, type LabDB } from '../storage/db';
import { CODE_RUNS, RunCatalog, type Database } from './catalog';
import { CodeRun, loadSession } from './code-run';
import { Evaluations } from './evaluations';
import type { PipelineSession, RunTrainer } from './session';

/**
 * The main thread's one IndexedDB connection, shared by the run panel, the custom trainings and
 * the tasks panel (the workers keep their own). Made once, by the page, and passed to each.
 * Another tab of a newer page closes it (or deletes the storage): every listener hears why.
 */
export class PageStorage implements Database {
  private closedListeners: ((message: string) => void)[] = [];
  private blockedListeners: (() => void)[] = [];
  private readonly connection: LabDbConnection;

  /** `name`: the database's (tests give each their own). */
  constructor(name?: string) {
    this.connection = new LabDbConnection(
      {
        blocked: () => {
          for (const l of this.blockedListeners) l();
        },
        closed: (message) => {
          for (const l of this.closedListeners) l(message);
        },
      },
      name,
    );
  }

  /** The connection, opened on first use (again after a newer page closed it). */
  get(): Promise<LabDB> {
    return this.connection.get();
  }

  /** Calls `listener` when another tab closed the connection (`message` says why, for the page). */
  onClosed(listener: (message: string) => void): void {
    this.closedListeners = [...this.closedListeners, listener];
  }

  /** Calls `listener` when opening waits for another tab (an older page) to close its connection. */
  onBlocked(listener: () => void): void {
    this.blockedListeners = [...this.blockedListeners, listener];
  }
}

/** What the page's run view does for the run layer. */
export interface RunViewHooks {
  notify(message: string): void;
  scored(runId: string, point: EvalPoint): void;
  /** The stopped session's last figures. */
  afterStop(session: PipelineSession): Promise<void>;
  /** The run list, read again once a run has ended. */
  afterEnd(): Promise<void>;
  /** What the view needs before a run's session is built (code it fetches apart). */
  beforeSession?(): Promise<void>;
}

/**
 * The page's code runs, assembled for the browser: the page's storage connection (a newer page's
 * tab closes it: the run fails and says why), the catalog with its Web Locks, the code run with
 * its rollout workers, and the evaluations' worker.
 */
export function browserCodeRuns(
  trainer: RunTrainer,
  storage: PageStorage,
  view: RunViewHooks,
): { catalog: RunCatalog; run: CodeRun; evaluations: Evaluations } {
  storage.onBlocked(() =>
    view.notify('Storage is waiting for another tab of this page, an older version, to close.'),
  );
  // A run cannot go on without its storage: it stops, and this message stays.
  storage.onClosed((message) => void run.fail(message, true));
  // The run's pipeline is a chunk of its own: fetched now, Train does not wait for it (a failed
  // fetch is tried again, and said, when a run starts).
  loadSession().catch(() => undefined);
  const catalog = new RunCatalog(CODE_RUNS, storage);
  const database = () => catalog.database();
  const run: CodeRun = new CodeRun({
    trainer,
    database,
    hold: (runId, until) => catalog.hold(runId, until),
    createRollout: (name, onCrash) => new RolloutBridge(name, onCrash),
    afterStop: (s) => view.afterStop(s),
    afterEnd: () => view.afterEnd(),
    beforeSession: async () => view.beforeSession?.(),
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
