import type { CustomEnvSpec } from '../env/custom';
import { RolloutBridge } from '../bridge/rollout-bridge';
import { CARTPOLE_JS } from '../env/custom';
import { CustomWorkload } from '../pipeline/custom-workload';
import { EventLog, type TimelineEvent } from '../pipeline/events';
import { SyncLoop, type IterationReport } from '../pipeline/sync-loop';
import { DEFAULT_CUSTOM_TRAIN } from '../rl/custom-config';
import type { TrainerState } from './trainer-state.svelte';

/** Returns of the random, untrained and trained policies on a custom environment. */
export interface CustomEnvReport {
  spec: CustomEnvSpec;
  /** Iterations trained (fewer than asked when stopped). */
  iterations: number;
  randomReturn: number;
  untrainedReturn: number;
  trainedReturn: number;
}

/**
 * UI state of the custom JS environment panel. Training goes through the same loop as the
 * code-writing policy: the rollout worker plays episodes in the sandboxed environment with the
 * adopted MLP version, the trainer worker updates the MLP and publishes the next version.
 */
export class CustomEnvState {
  code = $state(CARTPOLE_JS);
  iterations = $state(DEFAULT_CUSTOM_TRAIN.iterations);
  training = $state(false);
  history = $state.raw<IterationReport[]>([]);
  report = $state.raw<CustomEnvReport | null>(null);
  error = $state<string | null>(null);
  /** The loop's spans for the timeline (batch, update, publish), newest training only. */
  events = $state.raw<readonly TimelineEvent[]>([]);
  /** Stop asked: the loop ends after the iteration in progress, then measures the trained policy. */
  stopping = $state(false);

  private readonly rollout = new RolloutBridge('rollout-custom', (message) => {
    this.error = `rollout worker crashed: ${message}; it restarts on the next run`;
    this.rollout.terminate();
  });

  constructor(private readonly trainer: TrainerState) {}

  /** Ends training after the iteration in progress; the report then covers the iterations done. */
  stop(): void {
    if (this.training) this.stopping = true;
  }

  async train(): Promise<void> {
    if (this.training) return;
    if (!Number.isInteger(this.iterations) || this.iterations < 1 || this.iterations > 500) {
      this.error = 'iterations must be a whole number from 1 to 500';
      return;
    }
    if (this.trainer.status !== 'ready') {
      this.error = `the trainer is ${this.trainer.status}; wait until it is ready`;
      return;
    }
    this.training = true;
    this.trainer.status = 'busy';
    this.error = null;
    this.report = null;
    this.history = [];
    this.events = [];
    this.stopping = false;
    const log = new EventLog(3_000);
    const config = { ...DEFAULT_CUSTOM_TRAIN, iterations: this.iterations };
    try {
      const rollout = this.rollout.api;
      const trainer = this.trainer.api;
      const { spec, randomReturn } = await rollout.openCustomEnv(this.code, config.seed);
      await trainer.initCustom(
        { inputs: spec.observations, hidden: config.hidden, actions: spec.actions },
        config,
      );
      const loop = new SyncLoop(
        new CustomWorkload(
          {
            collectCustom: (n, g) => rollout.collectCustom(n, g),
            loadCustomPolicy: (s, v) => rollout.loadCustomPolicy(s, v),
          },
          {
            trainCustom: (b, v) => trainer.trainCustom(b, v),
            exportCustomPolicy: () => trainer.exportCustomPolicy(),
          },
          config.episodesPerIteration,
          config.gamma,
        ),
        (e) => log.push(e),
      );
      await loop.start();
      const untrainedReturn = await rollout.customReturn(10, false);
      for (let i = 0; i < config.iterations && !this.stopping; i++) {
        const report = await loop.iterate();
        this.history = [...this.history, report];
        this.events = [...log.events];
      }
      const trainedReturn = await rollout.customReturn(10, true);
      this.report = { spec, iterations: this.history.length, randomReturn, untrainedReturn, trainedReturn };
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
    } finally {
      this.events = [...log.events];
      this.training = false;
      this.stopping = false;
      if (this.trainer.status === 'busy') this.trainer.status = 'ready';
    }
  }
}
