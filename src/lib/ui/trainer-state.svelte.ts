import { errorMessage } from '../errors';
import { TrainerBridge } from '../bridge/trainer-bridge';
import type { TrainerInfo } from '../../../workers/trainer.worker';
import type { BackendName } from '../policy/backend';
import { DEFAULT_MODEL_ARGS } from '../policy/config';
import type { StepMetrics } from '../policy/metrics';
import { EventLog, type TimelineEvent } from '../pipeline/events';
import { TRAINER_CHECK_RUN_ID } from '../storage/weights-store';
import { statusOf, TrainerLease, type TrainerStatus } from '../run/trainer-lease';
import { WorkerCrashed, WorkerTerminated } from '../bridge/worker-errors';
import { DEFAULT_TRAINER_CONFIG } from '../rl/learner-config';

export { statusOf, type TrainerStatus } from '../run/trainer-lease';
export { choiceTitle } from '../policy/backend-choice';

/** The trainer as the run layer holds it. */
export type PageTrainerLease = TrainerLease<TrainerBridge['api'], TrainerInfo, BackendName>;

/** UI state of the trainer worker: backend, step metrics, saved versions, timeline events. */
export class TrainerState {
  /** The trainer worker's one owner: who holds it, its restarts, its crash policy. */
  readonly lease: PageTrainerLease;
  #status = $state<TrainerStatus>('idle');
  info = $state.raw<TrainerInfo | null>(null);
  error = $state<string | null>(null);
  /** What happened to the worker that the page should know (a crash it was restarted after). */
  notice = $state<string | null>(null);
  history = $state.raw<StepMetrics[]>([]);
  /** L1 distance of the per-parameter |w| sums from their value at start or load. */
  weightsMoved = $state(0);
  /** Sum of the per-parameter |w| sums: equal fingerprints mean equal weights, in practice. */
  fingerprint = $state<number | null>(null);
  /** ms from navigation start to the first finished training step. */
  firstStepAt = $state<number | null>(null);
  savedVersion = $state<number | null>(null);
  savedBytes = $state<number | null>(null);
  loadedVersion = $state<number | null>(null);
  /** What the last Save or Load said (nothing stored yet, a storage error), shown beside their buttons. */
  storeNote = $state<{ text: string; error: boolean } | null>(null);
  events = $state.raw<readonly TimelineEvent[]>([]);
  /** Stop was pressed: the step in progress finishes first (a second Stop ends it at once). */
  stopping = $state(false);

  private readonly log = new EventLog(2000);
  /** Other consumers of the trainer's timeline events (the run's timeline). */
  private listeners: ((events: TimelineEvent[]) => void)[] = [];
  private baseline: number[] = [];
  private stopRequested = false;
  private readonly bridge: TrainerBridge;

  constructor() {
    let bridge: TrainerBridge | undefined;
    this.lease = new TrainerLease({
      create: (onCrash) => {
        bridge = new TrainerBridge(onCrash);
        const b = bridge;
        return {
          get api() {
            return b.api;
          },
          withTimeout: (ms) => b.withTimeout(ms),
          boot: async (backends) => {
            const info = await b.boot(
              { backends, model: DEFAULT_MODEL_ARGS, config: DEFAULT_TRAINER_CONFIG },
              (events) => {
                this.log.push(...events);
                this.events = [...this.log.events];
                for (const l of this.listeners) l(events);
              },
            );
            this.info = info;
            this.history = [];
            await this.refreshFingerprint(true);
            return info;
          },
        };
      },
    });
    if (!bridge) throw new Error('the trainer lease made no bridge');
    this.bridge = bridge;
    this.lease.subscribe((e) => {
      // A crash rejects the call the panel's loop waits on (`WorkerCrashed`): nothing to do here.
      if (e.kind === 'restarted')
        this.notice = `The trainer worker crashed (${e.message}) and was started again, with fresh weights.`;
      else if (e.kind === 'state') {
        this.#status = statusOf(e.state);
        if (e.state.phase === 'starting') {
          this.stopping = false;
          this.error = null;
          this.notice = null;
        } else if (e.state.phase === 'error') this.error = e.state.error;
      }
    });
  }

  /** The trainer's state as the panel names it (derived from the lease). */
  get status(): TrainerStatus {
    return this.#status;
  }

  /** Subscribes to the trainer's timeline events; returns the unsubscribe function. */
  onEvents(listener: (events: TimelineEvent[]) => void): () => void {
    this.listeners = [...this.listeners, listener];
    return () => (this.listeners = this.listeners.filter((l) => l !== listener));
  }

  /** Takes over crash handling (a run restarts the trainer itself); returns the release function. */
  onCrash(listener: (message: string) => void): () => void {
    return this.lease.takeCrashes(listener);
  }

  /** The trainer worker's API, for the training-run controller (which owns no trainer of its own). */
  get api(): TrainerBridge['api'] {
    return this.bridge.api;
  }

  get last(): StepMetrics | undefined {
    return this.history.at(-1);
  }

  /** Starts the worker on the given backends (best first; all of them when omitted). */
  async start(backends?: BackendName[]): Promise<void> {
    await this.lease.start(backends);
  }

  /** Starts the worker again on the backends of the last start (after a crash). */
  async restart(): Promise<void> {
    await this.lease.restart();
  }

  /** Takes `steps` steps, one worker call each so the page updates and Stop works between them. */
  async train(steps: number): Promise<void> {
    if (!this.lease.acquire('panel')) return;
    this.stopRequested = false;
    this.stopping = false;
    try {
      for (let i = 0; i < steps && !this.stopRequested; i++) {
        const metrics = await this.bridge.api.train(1);
        this.firstStepAt ??= performance.now();
        this.history = [...this.history, ...metrics];
      }
      await this.refreshFingerprint(false);
      this.lease.release('panel');
    } catch (err) {
      // Terminated: "Stop now" started a new worker (and says so). Crashed: the lease's crash
      // policy restarts the worker and says so.
      if (!(err instanceof WorkerTerminated || err instanceof WorkerCrashed)) this.fail(errorMessage(err));
    } finally {
      this.stopping = false;
    }
  }

  /**
   * Stop after the step in progress; pressed again while that step has not come back ("Stop
   * now"), ends at once and starts the worker again: a worker that died without a word or hangs
   * never answers, and the panel would wait for it for ever.
   */
  stop(): void {
    if (this.lease.state.holder !== 'panel') return;
    if (this.stopping) {
      // The worker may be dead or hang: a new one, whose weights are fresh. The restart ends the
      // old worker, whose call in flight rejects (`WorkerTerminated`): the loop ends.
      void this.restart().then(() => {
        if (this.status === 'ready')
          this.notice =
            'Stopped at once: what the trainer worker was doing was given up, and it started again with fresh weights.';
      });
      return;
    }
    this.stopRequested = true;
    this.stopping = true;
  }

  /** Stores the weights and Adam's state as the next version of the panel's own record (no run). */
  async save(): Promise<void> {
    await this.busy(async () => {
      const { version, bytes } = await this.bridge.api.save(
        TRAINER_CHECK_RUN_ID,
        { model: DEFAULT_MODEL_ARGS, trainer: DEFAULT_TRAINER_CONFIG },
        'check',
      );
      this.savedVersion = version;
      this.savedBytes = bytes;
    });
  }

  /** Loads the newest version "Save version" stored, in this visit or an earlier one. */
  async loadLatest(): Promise<void> {
    await this.busy(async () => {
      const loaded = await this.bridge.api.load(TRAINER_CHECK_RUN_ID);
      if (!loaded) {
        this.storeNote = {
          text: 'Nothing saved yet: "Save version" stores these weights and Adam\'s state first.',
          error: false,
        };
        return;
      }
      this.loadedVersion = loaded.version;
      await this.refreshFingerprint(true);
    });
  }

  /** Save and Load: their outcome or error is said beside their buttons, not as the page's error. */
  private async busy(work: () => Promise<void>): Promise<void> {
    if (!this.lease.acquire('store')) return;
    this.storeNote = null;
    try {
      await work();
    } catch (err) {
      this.storeNote = { text: errorMessage(err), error: true };
    }
    this.lease.release('store');
  }

  private async refreshFingerprint(resetBaseline: boolean): Promise<void> {
    const fp = await this.bridge.api.fingerprint();
    if (resetBaseline) this.baseline = fp;
    this.weightsMoved = fp.reduce((s, v, i) => s + Math.abs(v - (this.baseline[i] ?? 0)), 0);
    this.fingerprint = fp.reduce((s, v) => s + v, 0);
  }

  /** Puts the trainer in error, saying why (`error`). */
  fail(message: string): void {
    this.lease.fail(message);
  }
}
