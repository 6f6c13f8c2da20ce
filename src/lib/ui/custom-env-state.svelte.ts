import { errorMessage } from '../errors';
import { RolloutBridge } from '../bridge/rollout-bridge';
import { CARTPOLE_JS } from '../custom/env';
import type { PipelineCounters } from '../pipeline/controller';
import type { TimelineEvent } from '../pipeline/events';
import type { StepReport } from '../pipeline/types';
import { DEFAULT_CUSTOM_TRAIN, type CustomTrainConfig } from '../custom/config';
import type { PageStorage } from '../run/browser';
import { CUSTOM_RUNS, RunCatalog } from '../run/catalog';
import { customRunStore, customTrainings, resumeStartOf, type CustomTraining } from '../run/custom-catalog';
import {
  CustomRun,
  loadCustomSession,
  type CustomEnvReport,
  type CustomRunEvent,
  type CustomRunState,
  type CustomTrainerPort,
} from '../run/custom-run';
import { newRunId } from '../run/run-init';
import { count } from '../plural';
import { DRAFTS } from './draft';

export type { CustomEnvReport } from '../run/custom-run';
export { trainingLock, trainingOf, type CustomTraining } from '../run/custom-catalog';

/**
 * UI state of the custom JS environment panel: the editor's code and settings, and the view of
 * the training (`CustomRun`: the same asynchronous pipeline as the code-writing policy) and of
 * the stored trainings (`RunCatalog` of `CUSTOM_RUNS`).
 */
export class CustomEnvState {
  #code = $state(DRAFTS.envCode.load(CARTPOLE_JS));
  /** The environment code in the editor (kept across reloads: `DRAFTS.envCode`). */
  get code(): string {
    return this.#code;
  }
  set code(text: string) {
    this.#code = text;
    DRAFTS.envCode.save(text);
  }
  iterations = $state(DEFAULT_CUSTOM_TRAIN.iterations);
  /** Max staleness η: 0 alternates rollout and training; ≥ 1 lets the workers play ahead. */
  eta = $state(DEFAULT_CUSTOM_TRAIN.eta);
  workers = $state(DEFAULT_CUSTOM_TRAIN.workers);
  /** Where the training stands (idle or failed: none runs). */
  #state = $state<CustomRunState>('idle');
  /** A training is in progress. */
  get training(): boolean {
    return this.#state === 'starting' || this.#state === 'running' || this.#state === 'stopping';
  }
  /** Stop asked: the update in progress publishes, then the trained policy is measured. */
  get stopping(): boolean {
    return this.#state === 'stopping';
  }
  /** The training in progress: the version it started from (a resume's) and the iterations it goes to. */
  startVersion = $state(0);
  asked = $state(DEFAULT_CUSTOM_TRAIN.iterations);
  /** One report per update: the version it published and the episodes it trained on. */
  history = $state.raw<StepReport[]>([]);
  report = $state.raw<CustomEnvReport | null>(null);
  error = $state<string | null>(null);
  /** The pipeline's spans and marks for the timeline, newest training only. */
  events = $state.raw<readonly TimelineEvent[]>([]);
  /** The newest training's pipeline counters (interrupts, stale drops, staleness). */
  counters = $state.raw<PipelineCounters | null>(null);
  /** What the training is doing now (null when none runs): the panel shows it. */
  phase = $state<string | null>(null);
  /** Something to know that is not an error (a Stop before the first update). */
  notice = $state<string | null>(null);
  /** The trainings stored in this browser, oldest first: each starts from a fresh policy, so they compare. */
  trainings = $state.raw<CustomTraining[]>([]);

  /** The stored trainings and their locks (this page's own trainings are not "elsewhere"). */
  private readonly catalog: RunCatalog;
  private readonly run: CustomRun;

  /**
   * `trainer`: the page's trainer worker (`TrainerState`), whose lease a training holds while it
   * runs; `storage`: the page's one storage connection (`PageStorage`), shared with the other panels.
   */
  constructor(
    private readonly trainer: CustomTrainerPort,
    storage: PageStorage,
  ) {
    // A training's session is a chunk of its own: fetched now, Train does not wait for it (a failed
    // fetch is tried again, and said, when a training starts).
    loadCustomSession().catch(() => undefined);
    this.catalog = new RunCatalog(CUSTOM_RUNS, storage);
    // A training cannot go on without its storage: it stops, saying why.
    storage.onClosed((message) => {
      if (this.training) this.run.fail(message);
    });
    this.run = new CustomRun({
      trainer,
      catalog: customRunStore(this.catalog),
      rolloutBridge: (name, onCrash) => new RolloutBridge(name, onCrash),
      newRunId: () => newRunId(undefined, 'custom'),
      refresh: () => this.loadTrainings(),
    });
    this.run.subscribe((e) => this.apply(e));
    // Another tab started or ended a training: the table says so without a reload.
    this.catalog.onElsewhereChange(() => void this.loadTrainings().catch(() => undefined));
  }

  /** The view of a run's event. */
  private apply(e: CustomRunEvent): void {
    switch (e.type) {
      case 'state':
        this.#state = e.state;
        break;
      case 'begin':
        this.startVersion = 0;
        this.asked = e.asked;
        this.error = null;
        this.report = null;
        this.history = [];
        this.events = [];
        this.counters = null;
        this.notice = null;
        break;
      case 'phase':
        this.phase = e.phase;
        break;
      case 'start-version':
        this.startVersion = e.version;
        break;
      case 'step':
        this.history = [...this.history, e.report];
        this.events = e.timeline;
        this.counters = e.counters;
        break;
      case 'counters':
        this.counters = e.counters;
        break;
      case 'timeline':
        this.events = e.events;
        break;
      case 'report':
        this.report = e.report;
        break;
      case 'error':
        if (!e.unlessShown || this.error === null) this.error = e.message;
        break;
      case 'notice':
        this.notice = e.message;
        break;
    }
  }

  /** Reads the stored trainings for the table, oldest first. */
  async loadTrainings(): Promise<void> {
    this.trainings = await customTrainings(this.catalog, this.run.runId);
  }

  /** Deletes a stored training and its versions (not the one training now). */
  async deleteTraining(runId: string): Promise<void> {
    const row = this.trainings.find((t) => t.runId === runId);
    if (runId === this.run.runId || row?.status === 'elsewhere') {
      this.notice = 'This training is in progress: stop it before deleting it.';
      return;
    }
    try {
      const n = this.trainings.findIndex((t) => t.runId === runId) + 1;
      const gone = await this.catalog.delete(runId);
      this.notice = gone.deleted
        ? `Deleted training ${n} and its ${count(gone.versions, 'stored version')}.`
        : 'This training is in progress in another tab: stop it there before deleting it.';
      await this.loadTrainings();
    } catch (err) {
      this.error = `the training could not be deleted: ${errorMessage(err)}`;
    }
  }

  /** Puts a stored training's environment code back in the editor (what is there now is replaced). */
  useCode(runId: string): void {
    const i = this.trainings.findIndex((t) => t.runId === runId);
    const t = this.trainings[i];
    if (!t || this.training) return;
    this.code = t.code;
    this.notice = `The editor now holds the code training ${i + 1} trained on.`;
  }

  /** The trainer worker's state: the panel trains only while it is ready (a run may hold it). */
  get trainerStatus(): string {
    return this.trainer.status;
  }

  /**
   * Ends training after the update in progress; the report then covers the updates done. Pressed
   * again while that winds down ("Stop now"), ends at once: a worker that died without a word or
   * hangs never answers, and the panel would wait for it for ever.
   */
  stop(): void {
    this.run.stop();
  }

  /** Trains a fresh policy on the editor's code with the panel's settings. */
  train(): Promise<void> {
    const config: CustomTrainConfig = {
      ...DEFAULT_CUSTOM_TRAIN,
      iterations: this.iterations,
      eta: this.eta,
      workers: this.workers,
    };
    // The code as it is now: edits during the training apply to the next one.
    return this.run.train({ kind: 'new', config, code: this.code });
  }

  /**
   * Goes on with a stored training from its newest version (its weights and Adam's state), with
   * its own code and settings, up to the iterations it was asked for. The episodes it had played
   * but not trained on are not stored for a custom environment: the resumed part plays new ones.
   */
  resume(runId: string): Promise<void> {
    const t = this.trainings.find((x) => x.runId === runId);
    if (!t || this.training) return Promise.resolve();
    if (!t.resumable) {
      this.notice = `Training ${this.trainings.indexOf(t) + 1} cannot be resumed (${t.status}, ${t.iterations} of ${t.asked} iterations).`;
      return Promise.resolve();
    }
    return this.run.train(resumeStartOf(t));
  }
}
