import * as Comlink from 'comlink';
import type { EvalRequest, RolloutApi } from '../../../workers/rollout.worker';
import type { WorkerBridge } from '../bridge/worker-bridge';
import { WorkerCrashed, WorkerTerminated } from '../bridge/worker-errors';
import type { EvalProgress, EvalRow } from '../env/evaluate';
import type { TryResult } from '../env/try-program';
import type { Task } from '../env/suite';
import { DEFAULT_MODEL_ARGS } from '../policy/config';
import type { Checkpoint } from '../policy/weights';

/** Why the tasks panel's worker was ended (Stop, a crash): what waited on it fails with this. */
export class WorkerEnded extends Error {
  override readonly name = 'WorkerEnded';
  constructor(
    message: string,
    /** Ended by Stop (not by a crash). */
    readonly stopped = false,
  ) {
    super(message);
  }
}

/**
 * The tasks panel's rollout worker: prepared once per worker, ended by Stop or a crash (the next
 * use starts a fresh one). Its bridge rejects the calls in flight when it ends; each method says
 * why with the `WorkerEnded` the panel gave, and a report of an ended evaluation is dropped.
 */
export class TasksWorker {
  private ready: Promise<string> | null = null;
  /** Ends so far: a wait begun before the last end fails with its reason. */
  private ends = 0;
  private ended: WorkerEnded | null = null;
  /** Evaluations started or ended: only the newest's reports count. */
  private evaluations = 0;

  constructor(private readonly bridge: Pick<WorkerBridge<RolloutApi>, 'api' | 'terminate'>) {}

  /** Which life of the worker a wait began in (for `check`). */
  get life(): number {
    return this.ends;
  }

  /** Throws why the worker ended if it ended since `life` (a wait that did not involve it). */
  check(life: number): void {
    if (life !== this.ends && this.ended) throw this.ended;
  }

  /** Ends the worker: every call waiting on it fails with `reason`. */
  end(reason: string, stopped = false): void {
    this.ends += 1;
    this.evaluations += 1; // a report it had already sent does not count any more
    this.ended = new WorkerEnded(reason, stopped);
    this.ready = null;
    this.bridge.terminate();
  }

  /** Starts and prepares the worker if it is not; resolves to its inference backend. */
  init(): Promise<string> {
    const ready = (this.ready ??= this.call(
      this.bridge.api.init({ model: DEFAULT_MODEL_ARGS, seed: 1 }),
    ).then((info) => info.backend));
    // A start that failed is tried again by the next use.
    ready.catch(() => {
      if (this.ready === ready) this.ready = null;
    });
    return ready;
  }

  /** Loads weights as the `policy` agent (a LoRA version merged into `base`). */
  async loadPolicy(checkpoint: Checkpoint, version: number, base?: Checkpoint): Promise<void> {
    const life = this.ends;
    await this.init();
    this.check(life); // ended while it started: the next use starts a fresh one
    await this.call(this.bridge.api.loadPolicy(checkpoint, version, base));
  }

  /** Evaluates tasks; `onProgress` hears this evaluation's reports only. */
  async evaluate(req: EvalRequest, onProgress: (p: EvalProgress) => void): Promise<EvalRow[]> {
    const evaluation = ++this.evaluations;
    const life = this.ends;
    await this.init();
    this.check(life);
    const report = Comlink.proxy((p: EvalProgress) => {
      if (evaluation === this.evaluations) onProgress(p);
    });
    return this.call(this.bridge.api.evaluate(req, report));
  }

  /** Runs a program on a task's tests. */
  tryProgram(task: Task, program: string): Promise<TryResult> {
    return this.call(this.bridge.api.tryProgram(task, program));
  }

  /** `p`, failing with the panel's reason when the worker ended under it. */
  private async call<T>(p: Promise<T>): Promise<T> {
    try {
      return await p;
    } catch (err) {
      if ((err instanceof WorkerTerminated || err instanceof WorkerCrashed) && this.ended) throw this.ended;
      throw err;
    }
  }
}
