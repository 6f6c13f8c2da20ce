import * as tf from '@tensorflow/tfjs';
import type { TrainerConfig } from './config';
import { PolicyTrainer } from './trainer';
import { adaptersFromCheckpoint, paramsFromCheckpoint, unpackTensors, type Checkpoint } from './weights';

/**
 * A trainer that continues from a stored checkpoint: its weights, its Adam state (when stored)
 * and its step count. A LoRA checkpoint holds only adapters: `base` is then the run's full
 * version they were trained on (its version 0), and the trainer trains the same adapters on it.
 */
export async function trainerFromCheckpoint(
  checkpoint: Checkpoint,
  base: Checkpoint | undefined,
  config: TrainerConfig,
): Promise<PolicyTrainer> {
  let trainer: PolicyTrainer;
  if (checkpoint.lora) {
    if (!base)
      throw new Error('this version holds LoRA adapters only, and the run has no full version (its base)');
    if (base.lora) throw new Error('the base of a LoRA version must be a full version');
    if (JSON.stringify(base.model) !== JSON.stringify(checkpoint.model))
      throw new Error('the LoRA version and its base were made for different model shapes');
    const adapters = adaptersFromCheckpoint(checkpoint);
    trainer = new PolicyTrainer(checkpoint.model, config, paramsFromCheckpoint(base), checkpoint.lora);
    try {
      trainer.loadAdapters(adapters);
    } catch (err) {
      trainer.dispose();
      throw err;
    } finally {
      tf.dispose([...adapters.values()]);
    }
  } else {
    trainer = new PolicyTrainer(checkpoint.model, config, paramsFromCheckpoint(checkpoint));
  }
  trainer.step = checkpoint.step;
  if (checkpoint.optimizer) {
    const named = unpackTensors(checkpoint.optimizer);
    await trainer.optimizer.setWeights(named);
    tf.dispose(named.map((n) => n.tensor));
  }
  return trainer;
}
