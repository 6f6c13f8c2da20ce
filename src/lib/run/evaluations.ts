import type { GreedyExportRequest, GreedyPlayed, RolloutApi } from '../../../workers/rollout.worker';
import { agentFigures, type EvalRow, type EvalTask } from '../env/evaluate';
import type { Level } from '../env/suite';
import { playEnvOf, runBuiltInTasks } from '../env/task-kinds';
import { errorMessage } from '../errors';
import { CoalescingQueue } from '../pipeline/coalescing-queue';
import type { RunConfig } from '../config/run-config';
import { runEvaluationTasks } from '../pipeline/run-tasks';
import type { EvalPoint } from '../pipeline/types';
import { DEFAULT_MODEL_ARGS } from '../policy/config';
import type { GreedyRow, LogitsFile } from '../export/greedy';
import type { Checkpoint } from '../policy/weights';
import type { LabDB, WeightsRecord } from '../storage/db';
import { getVersion, latestVersion, loraBaseOf } from '../storage/weights-store';
import { CrashSafeWorker } from './crash-safe-worker';
import type { Called } from './rollout-pool';

/** The evaluation worker as the evaluations drive it (the page's `RolloutBridge`; a fake in tests). */
export interface EvaluatorHost {
  readonly api: {
    init: Called<RolloutApi['init']>;
    loadPolicy: Called<RolloutApi['loadPolicy']>;
    evaluate: Called<RolloutApi['evaluate']>;
    playGreedy: Called<RolloutApi['playGreedy']>;
    greedyExport: Called<RolloutApi['greedyExport']>;
  };
  terminate(): void;
}

/** A greedy evaluation of a stored run. */
export interface EvalRequest {
  runId: string;
  /** The run's suite when asked. */
  /** The run's own tasks, the kind of its built-in ones and, for a tool-use run, its env (its turns). */
  settings: Pick<RunConfig, 'task' | 'env'>;
  level: Level | 'all';
  /** The version to score (the newest stored when undefined or pruned meanwhile). */
  version?: number;
}

/** One stored version of a run to play greedily on one of its tasks (`Evaluations.play`). */
export interface PlayRequest {
  runId: string;
  settings: Pick<RunConfig, 'task' | 'env'>;
  version: number;
  /** A task of `playableTasks(settings)`. */
  taskId: string;
}

/** A greedy episode of a stored version: which version, on which task, and how it went. */
export interface GreedyEpisode extends GreedyPlayed {
  runId: string;
  version: number;
  task: EvalTask;
}

/** The stored version asked for is not in the store (retention pruned it, or the run was deleted). */
export class VersionGone extends Error {
  override readonly name = 'VersionGone';
  constructor(
    readonly runId: string,
    readonly version: number,
  ) {
    super(`version ${version} of ${runId} is no longer stored (retention keeps only some versions)`);
  }
}

/**
 * The tasks a stored version of a run can be played on: those its evaluations score at every
 * level (training, held-out and generalisation tasks, each marked with its split).
 */
export function playableTasks(settings: Pick<RunConfig, 'task'>): EvalTask[] {
  return runEvaluationTasks(settings.task, runBuiltInTasks(settings.task), 'all');
}

export interface EvaluationsDeps {
  database(): Promise<LabDB>;
  /** Makes the evaluation worker; it calls `onCrash` when the worker dies. */
  createEvaluator(onCrash: (message: string) => void): EvaluatorHost;
  /** Where the run stands as a point is scored: its wall seconds and played episodes. */
  clock(): { seconds: number; episodes: number };
  /** A queued evaluation's point (`ask`). */
  scored(runId: string, point: EvalPoint): void;
  notice(message: string): void;
}

/**
 * Greedy evaluations of stored versions, one at a time, in a worker of their own (the rollout
 * workers keep playing): a periodic one asked for while another waits replaces it (evaluations
 * slower than the run's versions never caught up otherwise).
 */
export class Evaluations {
  private readonly queue: CoalescingQueue<EvalRequest>;
  private readonly worker: CrashSafeWorker<EvaluatorHost>;

  constructor(private readonly deps: EvaluationsDeps) {
    this.queue = new CoalescingQueue<EvalRequest>(
      async (r) => {
        const point = await this.evaluate(r);
        if (point) deps.scored(r.runId, point);
      },
      (err) => deps.notice(`evaluation failed: ${errorMessage(err)}`),
    );
    this.worker = new CrashSafeWorker(
      (onCrash) => deps.createEvaluator(onCrash),
      (w) => w.api.init({ model: DEFAULT_MODEL_ARGS, seed: 1 }),
      (m) => deps.notice(`the evaluation worker crashed: ${m}`),
    );
  }

  /** Queues an evaluation (replacing one that waits); its point goes to `scored`. */
  ask(r: EvalRequest): void {
    this.queue.ask(r);
  }

  /** Evaluates the newest stored version of a run now, after any queued evaluation. */
  async latest(r: Omit<EvalRequest, 'version'>): Promise<EvalPoint> {
    const point = await this.queue.run(() => this.evaluate(r));
    if (!point) throw new Error(`run ${r.runId} has no stored version`);
    return point;
  }

  /**
   * Plays stored version `version` greedily on one task in the evaluation worker, after any
   * queued evaluation. Nothing is stored and the run's pipeline is not involved. `onLoaded`
   * hears when the worker holds the version and the episode starts. Throws `VersionGone` when the
   * version is not stored.
   */
  play(r: PlayRequest, onLoaded?: () => void): Promise<GreedyEpisode> {
    return this.queue.run(async () => {
      const task = playableTasks(r.settings).find((t) => t.id === r.taskId);
      if (!task) throw new Error(`run ${r.runId} has no task ${r.taskId}`);
      const db = await this.deps.database();
      const record = await getVersion(db, r.runId, r.version);
      if (!record) throw new VersionGone(r.runId, r.version);
      const base = await loraBaseOf(db, record);
      const played = await this.worker.use(async (worker) => {
        await worker.api.loadPolicy(record.checkpoint, record.version, base);
        onLoaded?.();
        return worker.api.playGreedy({
          task,
          version: record.version,
          seed: 1,
          config: playEnvOf(r.settings),
        });
      });
      return { ...played, runId: r.runId, version: record.version, task };
    });
  }

  /**
   * A stored version's greedy play of `req.tasks` and its logits (an export's greedy.jsonl and
   * logits.json), in the evaluation worker after any queued evaluation.
   */
  greedyExport(
    record: Pick<WeightsRecord, 'checkpoint' | 'version'>,
    base: Checkpoint | undefined,
    req: GreedyExportRequest,
  ): Promise<{ rows: GreedyRow[]; logits: LogitsFile }> {
    return this.queue.run(() =>
      this.worker.use(async (worker) => {
        await worker.api.loadPolicy(record.checkpoint, record.version, base);
        return worker.api.greedyExport(req);
      }),
    );
  }

  /** Resolves when every queued evaluation is done. */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  /**
   * Greedy success of a stored version of a run (the newest when `version` is omitted or was
   * pruned meanwhile) on the tasks of `level` (`runEvaluationTasks`: a run's own suite, or an
   * evenly spaced sample of it when large); null when the run has no stored version.
   */
  async evaluate(r: EvalRequest): Promise<EvalPoint | null> {
    const db = await this.deps.database();
    const record =
      (r.version === undefined ? undefined : await getVersion(db, r.runId, r.version)) ??
      (await latestVersion(db, r.runId));
    if (!record) return null;
    // A LoRA version holds only adapters: the evaluator merges them into the run's base.
    const base = await loraBaseOf(db, record);
    const kind = r.settings.task.kind;
    const tasks = runEvaluationTasks(r.settings.task, runBuiltInTasks(r.settings.task), r.level);
    const rows = await this.worker.use(async (worker) => {
      await worker.api.loadPolicy(record.checkpoint, record.version, base);
      return worker.api.evaluate({
        tasks,
        agents: ['policy'],
        samples: 0,
        seed: 1,
        config: playEnvOf(r.settings),
      });
    });
    const f = agentFigures(rows, 'policy');
    const row = (split: EvalRow['split']) =>
      rows.find((x) => x.agent === 'policy' && x.split === split && x.level === 'all');
    const train = row('train');
    const held = row('heldOut');
    return {
      iteration: record.version,
      ...this.deps.clock(),
      level: r.level,
      suite: r.settings.task.suite?.name ?? null,
      successTrain: f.successTrain ?? 0,
      successHeldOut: f.successHeldOut,
      successGeneralisation: f.successGeneralisation,
      meanRewardTrain: train?.meanReward ?? 0,
      ...(kind === 'tooluse' && held?.toolUse
        ? {
            toolUse: {
              successOneTurn: held.toolUse.successOneTurn ?? null,
              solvedWithRun: held.toolUse.solvedWithRun,
              meanTurns: held.meanTurns,
              runFraction: held.toolUse.runFraction,
              reviseRate: held.toolUse.reviseRate,
              copyRate: held.toolUse.copyRate,
            },
          }
        : {}),
    };
  }
}
