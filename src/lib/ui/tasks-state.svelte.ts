import { errorMessage, shownNumber } from '../errors';
import * as Comlink from 'comlink';
import type { AgentName } from '../../../workers/rollout.worker';
import type { TryRow } from '../env/try-program';
import { RolloutBridge } from '../bridge/rollout-bridge';
import type { EvalProgress, EvalRow, EvalTask } from '../env/evaluate';
import { generateTasks } from '../env/families';
import { parseSuite, type Task, type TaskSuite } from '../env/suite';
import { DEFAULT_MODEL_ARGS } from '../policy/config';
import type { Checkpoint } from '../policy/weights';
import { LabDbConnection, type LabDB } from '../storage/db';
import { addTaskToSuite, getSuite, listSuites, putSuite } from '../storage/suites-store';
import { latestVersion, loraBaseOf } from '../storage/weights-store';
import { count } from './plural';
import { DRAFTS } from './draft';
import { failureSignal } from './failure-signal';

/** A suite the page can evaluate: the built-in one (with its split) or a saved one (all held-out). */
export interface SuiteEntry {
  name: string;
  source: 'built-in' | 'saved';
  tasks: EvalTask[];
}

/** Seed of the built-in suite shown in the page. */
export const BUILT_IN_SEED = 1;
export const BUILT_IN_NAME = `built-in (seed ${BUILT_IN_SEED})`;
/** The suite that "Add to my tasks" writes to. */
export const MY_TASKS = 'my tasks';
/** Why the tasks panel's worker was ended (Stop, a crash): what waited on it fails with this. */
class WorkerEnded extends Error {
  constructor(
    message: string,
    /** Ended by Stop (not by a crash). */
    readonly stopped = false,
  ) {
    super(message);
  }
}

/** Most sampled episodes per task an evaluation plays (a table of the built-in suite is 258 tasks). */
export const MAX_SAMPLES = 16;

const EXAMPLE_TASK: Task = {
  id: 'triple-minus-two',
  level: 'medium',
  examples: [1, 2, 4].map((x) => ({ input: x, output: 3 * x - 2 })),
  hidden: [0, 3, 5, 10].map((x) => ({ input: x, output: 3 * x - 2 })),
};

/** The suite file of an entry: tasks without their split (a file has none). */
export function suiteFile(entry: SuiteEntry): TaskSuite {
  return {
    name: entry.name,
    tasks: entry.tasks.map(({ id, level, examples, hidden }) => ({ id, level, examples, hidden })),
  };
}

/** Reads one task typed in the editor, checked the way a suite file is. Throws with path and problem. */
export function parseTaskText(text: string): Task {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`the task is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  const parsed = parseSuite(JSON.stringify({ name: 'editor', tasks: [value] }));
  if (!parsed.ok) throw new Error(`${parsed.path.replace('$.tasks[0]', 'task')}: ${parsed.message}`);
  const task = parsed.suite.tasks[0];
  if (!task) throw new Error('no task');
  return task;
}

/** UI state of the tasks panel: suites, import/export, the evaluation table, the task editor. */
export class TasksState {
  suites = $state.raw<SuiteEntry[]>([]);
  selected = $state(BUILT_IN_NAME);
  /** The last import's problem (file, path, message); null after a good import. */
  importError = $state<string | null>(null);
  notice = $state<string | null>(null);
  evaluating = $state(false);
  progress = $state.raw<EvalProgress | null>(null);
  rows = $state.raw<EvalRow[]>([]);
  /**
   * What the table in `rows` evaluated: suite, its task count, samples per task; `stopped` when
   * Stop ended it and the table holds the agents it had finished.
   */
  rowsOf = $state.raw<{ suite: string; tasks: number; samples: number; stopped?: boolean } | null>(null);
  /** The rows the evaluation in progress has finished (each agent's as it ends). */
  private finishedRows: EvalRow[] = [];
  /** Evaluations started, the newest's number. */
  private evaluations = 0;
  evalError = $state<string | null>(null);
  /** Sampled episodes per task for the token agents (1 to `MAX_SAMPLES`). */
  samples = $state(2);
  agents = $state<AgentName[]>(['random', 'untrained', 'bruteforce']);
  #taskText = $state(DRAFTS.taskText.load(JSON.stringify(EXAMPLE_TASK, null, 2)));
  /** The task JSON in the editor (kept across reloads: `DRAFTS.taskText`). */
  get taskText(): string {
    return this.#taskText;
  }
  set taskText(text: string) {
    this.#taskText = text;
    DRAFTS.taskText.save(text);
  }
  #program = $state(DRAFTS.taskProgram.load('3*x-2'));
  /** The program tried on the task (kept across reloads: `DRAFTS.taskProgram`). */
  get program(): string {
    return this.#program;
  }
  set program(text: string) {
    this.#program = text;
    DRAFTS.taskProgram.save(text);
  }
  tryRows = $state.raw<TryRow[]>([]);
  /** The whole run's error when the program fails run on every test at once (`TryResult`). */
  tryRunError = $state<string | null>(null);
  tryError = $state<string | null>(null);
  backend = $state<string | null>(null);
  /** The stored run whose newest version plays as the `policy` agent ('' while none is chosen). */
  policyRun = $state('');
  /** The version the `policy` agent last played: run and version number. */
  loadedPolicy = $state.raw<{ runId: string; version: number } | null>(null);

  readonly rollout = new RolloutBridge('rollout-tasks', (message) =>
    this.endWorker(`the tasks panel's rollout worker crashed: ${message}; it restarts on the next use`),
  );
  private ready: Promise<unknown> | null = null;
  private readonly db = new LabDbConnection();
  /**
   * Rejects when the worker is ended (Stop, a crash): a call to an ended worker never settles, so
   * every call the panel waits on races this.
   */
  private gone = failureSignal();

  get current(): SuiteEntry | undefined {
    return this.suites.find((s) => s.name === this.selected);
  }

  private database(): Promise<LabDB> {
    return this.db.get();
  }

  /** Lists the built-in suite and every saved suite. */
  async load(): Promise<void> {
    const builtIn: SuiteEntry = {
      name: BUILT_IN_NAME,
      source: 'built-in',
      tasks: generateTasks(BUILT_IN_SEED).map(({ family: _f, program: _p, ...t }) => t),
    };
    const saved = await listSuites(await this.database());
    this.suites = [
      builtIn,
      ...saved.map((r): SuiteEntry => ({
        name: r.suite.name,
        source: 'saved',
        tasks: r.suite.tasks.map((t) => ({ ...t, heldOut: true })),
      })),
    ];
  }

  /**
   * Imports a suite file: validated whole, then saved and selected. A bad file changes nothing
   * and says what is wrong and where. A saved suite of the same name is replaced only once
   * `confirmReplace` (asked with its name and task counts) agrees; without one it is replaced.
   */
  async importFile(
    fileName: string,
    text: string,
    confirmReplace?: (name: string, savedTasks: number, fileTasks: number) => boolean,
  ): Promise<boolean> {
    const parsed = parseSuite(text);
    this.notice = null;
    if (!parsed.ok) {
      this.importError = `${fileName} was not imported: ${parsed.path}: ${parsed.message}`;
      return false;
    }
    if (parsed.suite.name === BUILT_IN_NAME) {
      this.importError = `${fileName} was not imported: $.name: "${BUILT_IN_NAME}" is the built-in suite's name (it is always here; to import a copy, give the file's "name" another value: an imported suite is all held out)`;
      return false;
    }
    // What is saved now (another tab may have saved a suite of this name since this one loaded).
    const db = await this.database();
    const existing = (await getSuite(db, parsed.suite.name))?.suite;
    if (
      existing &&
      confirmReplace &&
      !confirmReplace(existing.name, existing.tasks.length, parsed.suite.tasks.length)
    ) {
      this.importError = null;
      this.notice = `${fileName} was not imported: kept the saved "${existing.name}"`;
      return false;
    }
    const replaced = existing !== undefined;
    try {
      await putSuite(db, parsed.suite);
    } catch (err) {
      this.importError = `${fileName} was not imported: ${errorMessage(err)}`;
      return false;
    }
    await this.load();
    this.selected = parsed.suite.name;
    this.importError = null;
    this.notice = `${replaced ? 'Replaced' : 'Imported'} "${parsed.suite.name}": ${count(parsed.suite.tasks.length, 'task')} (all held out)`;
    return true;
  }

  /** The selected suite as a file to download. */
  exportFile(): { fileName: string; text: string } | null {
    const entry = this.current;
    if (!entry) return null;
    const base = entry.name.replace(/[^\w.-]+/g, '-').replace(/^-+|-+$/g, '');
    const fileName = `${base || 'suite'}.json`;
    return { fileName, text: JSON.stringify(suiteFile(entry), null, 2) };
  }

  private async init(): Promise<void> {
    this.ready ??= this.rollout.api.init({ model: DEFAULT_MODEL_ARGS, seed: 1 }).then((info) => {
      this.backend = info.backend;
    });
    await this.ready;
  }

  /** Evaluates the selected suite with the chosen agents; fills `rows`. */
  async evaluate(): Promise<void> {
    const entry = this.current;
    if (!entry || this.evaluating) return;
    if (!Number.isInteger(this.samples) || this.samples < 1 || this.samples > MAX_SAMPLES) {
      this.evalError = `samples per task must be a whole number from 1 to ${MAX_SAMPLES}, got ${shownNumber(this.samples)}`;
      return;
    }
    this.evaluating = true;
    this.evalError = null;
    // The table goes with the evaluation that starts: a failed one shows none, a stopped one the
    // agents it finished.
    this.rows = [];
    this.rowsOf = null;
    this.finishedRows = [];
    const of = { suite: entry.name, tasks: entry.tasks.length, samples: this.samples };
    try {
      if (this.agents.includes('policy')) await this.call(this.loadRunPolicy(this.policyRun));
      this.rows = await this.call(this.evaluateTasks(entry.tasks, [...this.agents], this.samples));
      this.rowsOf = of;
    } catch (err) {
      const kept = this.finishedRows;
      if (err instanceof WorkerEnded && err.stopped && kept.length) {
        this.rows = kept;
        this.rowsOf = { ...of, stopped: true };
        const agents = kept.map((r) => `${r.agent} (${r.mode})`).filter((a, i, all) => all.indexOf(a) === i);
        this.evalError = `evaluation stopped; the table shows what it finished: ${agents.join(', ')}`;
      } else this.evalError = errorMessage(err);
    } finally {
      this.evaluating = false;
    }
  }

  /** `p`, or the reason the worker was ended if that comes first. */
  private call<T>(p: Promise<T>): Promise<T> {
    return Promise.race([p, this.gone.promise]);
  }

  /** Ends the worker (the next use starts a fresh one): what waits on it fails with `reason`. */
  private endWorker(reason: string, stopped = false): void {
    this.rollout.terminate();
    this.evaluations += 1; // a report it had already sent does not count any more
    this.ready = null;
    this.loadedPolicy = null;
    this.progress = null;
    this.gone.reject(new WorkerEnded(reason, stopped));
    this.gone = failureSignal();
  }

  /**
   * Stops the evaluation in progress: its rollout worker is ended (the next use starts a fresh
   * one, which loads the chosen policy again); a try in flight on it ends too, and says so.
   */
  stopEvaluation(): void {
    if (this.evaluating) this.endWorker('evaluation stopped; nothing from it is shown', true);
  }

  /** Loads trained weights into the rollout worker as the `policy` agent (the bench uses this). */
  async loadPolicy(checkpoint: Checkpoint): Promise<void> {
    await this.init();
    await this.rollout.api.loadPolicy(checkpoint, 0);
  }

  /**
   * Loads the newest stored version of a run as the `policy` agent (a LoRA version merged into
   * its run's base). Throws when no run is named or it has no stored version.
   */
  async loadRunPolicy(runId: string): Promise<void> {
    if (!runId)
      throw new Error('choose the stored run whose policy to evaluate, or leave "trained policy" out');
    const db = await this.database();
    const record = await latestVersion(db, runId);
    if (!record) throw new Error(`run ${runId} has no stored version to evaluate`);
    await this.init();
    await this.rollout.api.loadPolicy(record.checkpoint, record.version, await loraBaseOf(db, record));
    this.loadedPolicy = { runId, version: record.version };
  }

  /** Evaluates `tasks` in the rollout worker, updating `progress` (the page and the bench use this). */
  async evaluateTasks(
    tasks: EvalTask[],
    agents: AgentName[],
    samples: number,
    bruteMaxRuns?: number,
  ): Promise<EvalRow[]> {
    this.progress = null;
    // A late report of an evaluation that was stopped does not count for this one.
    const evaluation = ++this.evaluations;
    await this.init();
    return this.rollout.api.evaluate(
      { tasks, agents, samples, bruteMaxRuns, seed: 1 },
      Comlink.proxy((p: EvalProgress) => {
        if (evaluation !== this.evaluations) return;
        this.progress = p;
        if (p.rows) this.finishedRows = p.rows;
      }),
    );
  }

  /** Runs the editor's program on the editor's task. */
  async tryTask(): Promise<void> {
    this.tryError = null;
    this.tryRows = [];
    this.tryRunError = null;
    try {
      const task = parseTaskText(this.taskText);
      if (!this.program.trim()) throw new Error('write a program (an expression in x) to try');
      const tried = await this.call(this.rollout.api.tryProgram(task, this.program));
      this.tryRows = tried.rows;
      this.tryRunError = tried.runError;
    } catch (err) {
      this.tryError =
        err instanceof WorkerEnded
          ? `the try ended with the tasks worker (${errorMessage(err)}); try again`
          : errorMessage(err);
    }
  }

  /** Adds the editor's task to the "my tasks" suite (replacing a task with the same id). */
  async addTask(): Promise<void> {
    this.tryError = null;
    this.notice = null;
    try {
      const task = parseTaskText(this.taskText);
      // Read and written in one transaction: another tab's additions are kept.
      const { tasks, replaced } = await addTaskToSuite(await this.database(), MY_TASKS, task);
      await this.load();
      this.selected = MY_TASKS;
      this.notice = `${replaced ? 'Replaced' : 'Added'} ${task.id} ${replaced ? 'in' : 'to'} "${MY_TASKS}" (${count(tasks, 'task')})`;
    } catch (err) {
      this.tryError = errorMessage(err);
    }
  }
}
