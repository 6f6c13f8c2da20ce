import * as tf from '@tensorflow/tfjs';
import type { TrainerConfig } from './config';
import { mergedWeights, type LoraConfig } from './lora';
import type { Params } from './model';
import { PolicyTrainer } from './trainer';
import { adaptersFromCheckpoint, paramsFromCheckpoint, unpackTensors, type Checkpoint } from './weights';

/** Checks that `base` can be the base of the LoRA checkpoint `checkpoint`. */
function checkBase(checkpoint: Checkpoint, base: Checkpoint | undefined): Checkpoint {
  if (!base)
    throw new Error('this version holds LoRA adapters only, and the run has no full version (its base)');
  if (base.lora) throw new Error('the base of a LoRA version must be a full version');
  const a: Record<string, unknown> = { ...base.model };
  const b: Record<string, unknown> = { ...checkpoint.model };
  if ([...new Set([...Object.keys(a), ...Object.keys(b)])].some((k) => a[k] !== b[k]))
    throw new Error('the LoRA version and its base were made for different model shapes');
  return base;
}

/**
 * Every parameter of the policy a stored checkpoint runs (a LoRA version merged into `base`),
 * as new trainable variables: the starting weights of a run that starts from another's version.
 */
export function policyFromCheckpoint(checkpoint: Checkpoint, base: Checkpoint | undefined): Params {
  if (!checkpoint.lora) return paramsFromCheckpoint(checkpoint);
  const baseParams = paramsFromCheckpoint(checkBase(checkpoint, base));
  const adapters = adaptersFromCheckpoint(checkpoint);
  const merged = mergedWeights(baseParams, adapters, checkpoint.lora);
  const out: Params = new Map([...merged].map(([name, t]) => [name, tf.variable(t, true)]));
  tf.dispose([...merged.values(), ...adapters.values(), ...baseParams.values()]);
  return out;
}

/**
 * A trainer that continues from a stored checkpoint: its weights, its Adam state (when stored)
 * and its step count. A LoRA checkpoint holds only adapters: `base` is then the run's full
 * version they were trained on (its version 0), and the trainer trains the same adapters on it.
 * `lora` is the run's own setting: a LoRA run's version 0 is that full base, and the trainer
 * continuing from it trains fresh adapters on it (not every parameter); a trained full version
 * (step > 0) goes on as it was trained, every parameter.
 */
export async function trainerFromCheckpoint(
  checkpoint: Checkpoint,
  base: Checkpoint | undefined,
  config: TrainerConfig,
  lora?: LoraConfig,
): Promise<PolicyTrainer> {
  let trainer: PolicyTrainer;
  // Fresh adapters go only on an untrained full version (a LoRA run's version 0): a trained full
  // version's Adam state is for every parameter, and it goes on training every parameter.
  const freshAdapters = !checkpoint.lora && checkpoint.step === 0 ? lora : undefined;
  if (checkpoint.lora) {
    const baseParams = paramsFromCheckpoint(checkBase(checkpoint, base));
    const adapters = adaptersFromCheckpoint(checkpoint);
    trainer = new PolicyTrainer(checkpoint.model, config, baseParams, checkpoint.lora);
    try {
      trainer.loadAdapters(adapters);
    } catch (err) {
      trainer.dispose();
      throw err;
    } finally {
      tf.dispose([...adapters.values()]);
    }
  } else {
    trainer = new PolicyTrainer(checkpoint.model, config, paramsFromCheckpoint(checkpoint), freshAdapters);
  }
  trainer.step = checkpoint.step;
  if (checkpoint.optimizer) {
    const named = unpackTensors(checkpoint.optimizer);
    await trainer.optimizer.setWeights(named);
    tf.dispose(named.map((n) => n.tensor));
  }
  return trainer;
}
