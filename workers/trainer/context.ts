import type { LoraConfig } from '../../src/lib/policy/lora';
import { trainerFromCheckpoint } from '../../src/lib/rl/restore';
import type { PolicyTrainer } from '../../src/lib/rl/trainer';
import type { TimelineEvent } from '../../src/lib/pipeline/events';
import { LabDbConnection, type LabDB, type WeightsRecord } from '../../src/lib/storage/db';
import { loraBaseOf } from '../../src/lib/storage/weights-store';
import { type TrainerConfig } from '../../src/lib/rl/learner-config';

/** What the trainer worker's features share: the policy, its version, the store and the timeline. */
export class TrainerContext {
  /** The policy being trained (`init()` builds it; a load, reset or resume replaces it). */
  trainer: PolicyTrainer | undefined;
  /** The version the policy is at: the last published, saved or loaded (−1: none yet). */
  version = -1;
  /** Seed of the next imitation batch. */
  batchSeed = 0;
  /** This worker's connection (closed for a newer page in another tab; its next use then says so). */
  private readonly db = new LabDbConnection();
  private sink: ((events: TimelineEvent[]) => void) | undefined;

  requireTrainer(): PolicyTrainer {
    if (!this.trainer) throw new Error('trainer not initialised: call init() first');
    return this.trainer;
  }

  database(): Promise<LabDB> {
    return this.db.get();
  }

  /** Sends a timeline event to the page's sink, when it registered one. */
  emit(event: TimelineEvent): void {
    this.sink?.([event]);
  }

  setSink(callback: (events: TimelineEvent[]) => void): void {
    this.sink = callback;
  }
}

/** A trainer continuing from a stored version (a LoRA version on its run's base) of a run set to `lora`. */
export async function restoreTrainer(
  d: LabDB,
  record: WeightsRecord,
  config: TrainerConfig,
  lora?: LoraConfig,
): Promise<PolicyTrainer> {
  return trainerFromCheckpoint(record.checkpoint, await loraBaseOf(d, record), config, lora);
}
