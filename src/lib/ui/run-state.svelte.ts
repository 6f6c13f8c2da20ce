import { RolloutBridge } from '../bridge/rollout-bridge';
import type { CurriculumView } from '../env/curriculum';
import { generateTasks } from '../env/families';
import { DEFAULT_MODEL_ARGS } from '../policy/config';
import { CodeWorkload, DEFAULT_CODE_RUN } from '../pipeline/code-workload';
import { SyncLoop, type IterationReport } from '../pipeline/sync-loop';
import type { StepMetrics } from '../policy/trainer';
import { BUILT_IN_SEED } from './tasks-state.svelte';
import type { TrainerState } from './trainer-state.svelte';

/**
 * UI state of a training run of the code-writing policy: the synchronous loop (η = 0) between
 * one rollout worker and the trainer worker, with its curriculum.
 */
export class RunState {
  running = $state(false);
  error = $state<string | null>(null);
  history = $state.raw<IterationReport[]>([]);
  /** The trainer's metrics of the last update. */
  metrics = $state.raw<StepMetrics | null>(null);
  curriculum = $state.raw<CurriculumView | null>(null);
  /** Curriculum on (easy → medium → hard) or off (every level at once); read at start. */
  curriculumOn = $state(true);
  estimator = $state<'rloo' | 'grpo'>('rloo');
  rolloutBackend = $state<string | null>(null);

  private stopRequested = false;
  private readonly rollout = new RolloutBridge('rollout-0', (message) => {
    this.error = `rollout worker crashed: ${message}`;
    this.stopRequested = true;
  });

  constructor(private readonly trainer: TrainerState) {}

  /** Runs iterations until stopped (or `maxIterations`). The trainer must be ready. */
  async start(maxIterations = Infinity): Promise<void> {
    if (this.running) return;
    if (this.trainer.status !== 'ready') {
      this.error = `the trainer is ${this.trainer.status}; wait until it is ready`;
      return;
    }
    this.running = true;
    this.stopRequested = false;
    this.error = null;
    this.history = [];
    this.trainer.status = 'busy';
    try {
      const info = await this.rollout.api.init({ model: DEFAULT_MODEL_ARGS, seed: 1 });
      this.rolloutBackend = info.backend;
      const rollout = this.rollout.api;
      const trainer = this.trainer.api;
      const work = new CodeWorkload(
        { collect: (r) => rollout.collect(r), loadPolicy: (c, v) => rollout.loadPolicy(c, v) },
        { trainBatch: (b, v) => trainer.trainBatch(b, v), exportPolicy: () => trainer.exportPolicy() },
        generateTasks(BUILT_IN_SEED).filter((t) => !t.heldOut),
        {
          ...DEFAULT_CODE_RUN,
          estimator: this.estimator,
          curriculum: { ...DEFAULT_CODE_RUN.curriculum, enabled: this.curriculumOn },
        },
      );
      const loop = new SyncLoop(work);
      this.curriculum = work.curriculum.view();
      while (!this.stopRequested && loop.iteration < maxIterations) {
        const report = await loop.iterate();
        this.history = [...this.history, report];
        this.curriculum = work.curriculum.view();
        this.metrics = work.lastMetrics;
      }
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
    } finally {
      this.running = false;
      if (this.trainer.status === 'busy') this.trainer.status = 'ready';
    }
  }

  /** Stops after the iteration in progress. */
  stop(): void {
    this.stopRequested = true;
  }
}
