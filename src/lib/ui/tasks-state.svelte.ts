import { errorMessage } from '../errors';
import type { AgentName } from '../../../workers/rollout.worker';
import type { TryRow } from '../env/try-program';
import { RolloutBridge } from '../bridge/rollout-bridge';
import type { EnvConfig } from '../env/config';
import type { EvalProgress, EvalRow, EvalTask } from '../env/evaluate';
import {
  BUILT_IN_NAME,
  builtInSuite,
  EXAMPLE_TASK,
  exportedSuite,
  importedSuite,
  MY_TASKS,
  parseTaskText,
  samplesProblem,
  savedSuite,
  type SuiteEntry,
} from '../env/suite-entries';
import type { Checkpoint } from '../policy/weights';
import type { LabDB } from '../storage/db';
import type { PageStorage } from '../run/browser';
import { addTaskToSuite, getSuite, listSuites, putSuite } from '../storage/suites-store';
import { latestVersion, loraBaseOf } from '../storage/weights-store';
import { count } from '../plural';
import { DRAFTS } from './draft';
import { TasksWorker, WorkerEnded } from './tasks-worker';

export type { AgentName };
export {
  BUILT_IN_NAME,
  BUILT_IN_SEED,
  MAX_SAMPLES,
  MY_TASKS,
  parseTaskText,
  suiteFile,
  type SuiteEntry,
} from '../env/suite-entries';

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

  /** Its crash rejects the calls in flight; what waits on them says why (`WorkerEnded`). */
  readonly rollout = new RolloutBridge('rollout-tasks', (message) =>
    this.endWorker(`the tasks panel's rollout worker crashed: ${message}; it restarts on the next use`),
  );
  private readonly worker = new TasksWorker(this.rollout);

  /** `db`: the page's one storage connection (`PageStorage`), shared with the other panels. */
  constructor(private readonly db: PageStorage) {}

  get current(): SuiteEntry | undefined {
    return this.suites.find((s) => s.name === this.selected);
  }

  private database(): Promise<LabDB> {
    return this.db.get();
  }

  /** Lists the built-in suite and every saved suite. */
  async load(): Promise<void> {
    const saved = await listSuites(await this.database());
    this.suites = [builtInSuite(), ...saved.map((r) => savedSuite(r.suite))];
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
    const parsed = importedSuite(fileName, text);
    this.notice = null;
    if ('problem' in parsed) {
      this.importError = parsed.problem;
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
    return entry ? exportedSuite(entry) : null;
  }

  /** Evaluates the selected suite with the chosen agents; fills `rows`. */
  async evaluate(): Promise<void> {
    const entry = this.current;
    if (!entry || this.evaluating) return;
    const problem = samplesProblem(this.samples);
    if (problem) {
      this.evalError = problem;
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
      if (this.agents.includes('policy')) await this.loadRunPolicy(this.policyRun);
      this.rows = await this.evaluateTasks(entry.tasks, [...this.agents], this.samples);
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

  /** Ends the worker (the next use starts a fresh one): what waits on it fails with `reason`. */
  private endWorker(reason: string, stopped = false): void {
    this.worker.end(reason, stopped);
    this.loadedPolicy = null;
    this.progress = null;
  }

  /** Starts and prepares the worker if it is not. */
  private async init(): Promise<void> {
    this.backend = await this.worker.init();
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
    await this.worker.loadPolicy(checkpoint, 0);
  }

  /**
   * Loads the newest stored version of a run as the `policy` agent (a LoRA version merged into
   * its run's base). Throws when no run is named or it has no stored version.
   */
  async loadRunPolicy(runId: string): Promise<void> {
    if (!runId)
      throw new Error('choose the stored run whose policy to evaluate, or leave "trained policy" out');
    // A Stop while the store is read ends the load too (it would start a new worker).
    const life = this.worker.life;
    const db = await this.database();
    const record = await latestVersion(db, runId);
    if (!record) throw new Error(`run ${runId} has no stored version to evaluate`);
    const base = await loraBaseOf(db, record);
    this.worker.check(life);
    await this.init();
    await this.worker.loadPolicy(record.checkpoint, record.version, base);
    this.loadedPolicy = { runId, version: record.version };
  }

  /**
   * Evaluates `tasks` in the rollout worker, updating `progress` (the page and the bench use this);
   * `config`: the environment to play them in (the default env when absent).
   */
  async evaluateTasks(
    tasks: EvalTask[],
    agents: AgentName[],
    samples: number,
    bruteMaxRuns?: number,
    config?: EnvConfig,
  ): Promise<EvalRow[]> {
    this.progress = null;
    await this.init();
    return this.worker.evaluate({ tasks, agents, samples, bruteMaxRuns, config, seed: 1 }, (p) => {
      this.progress = p;
      if (p.rows) this.finishedRows = p.rows;
    });
  }

  /** Runs the editor's program on the editor's task. */
  async tryTask(): Promise<void> {
    this.tryError = null;
    this.tryRows = [];
    this.tryRunError = null;
    try {
      const task = parseTaskText(this.taskText);
      if (!this.program.trim()) throw new Error('write a program (an expression in x) to try');
      const tried = await this.worker.tryProgram(task, this.program);
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
