import * as Comlink from 'comlink';
import type { CustomEnvReport } from '../../../workers/rollout.worker';
import { RolloutBridge } from '../bridge/rollout-bridge';
import { CARTPOLE_JS } from '../env/custom';
import { DEFAULT_MODEL_ARGS } from '../policy/config';
import { DEFAULT_CUSTOM_TRAIN, type CustomIteration } from '../rl/custom-config';

/** UI state of the custom JS environment panel. */
export class CustomEnvState {
  code = $state(CARTPOLE_JS);
  iterations = $state(DEFAULT_CUSTOM_TRAIN.iterations);
  training = $state(false);
  history = $state.raw<CustomIteration[]>([]);
  report = $state.raw<CustomEnvReport | null>(null);
  error = $state<string | null>(null);

  private readonly rollout = new RolloutBridge('rollout-custom', (message) => {
    this.error = `rollout worker crashed: ${message}; it restarts on the next run`;
    this.training = false;
    this.rollout.terminate();
    this.ready = null;
  });
  private ready: Promise<unknown> | null = null;

  async train(): Promise<void> {
    if (this.training) return;
    if (!Number.isInteger(this.iterations) || this.iterations < 1 || this.iterations > 500) {
      this.error = 'iterations must be a whole number from 1 to 500';
      return;
    }
    this.training = true;
    this.error = null;
    this.report = null;
    this.history = [];
    try {
      this.ready ??= this.rollout.api.init({ backends: ['cpu'], model: DEFAULT_MODEL_ARGS, seed: 1 });
      await this.ready;
      this.report = await this.rollout.api.trainCustomEnv(
        this.code,
        { ...DEFAULT_CUSTOM_TRAIN, iterations: this.iterations },
        Comlink.proxy((it: CustomIteration) => (this.history = [...this.history, it])),
      );
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
    } finally {
      this.training = false;
    }
  }
}
