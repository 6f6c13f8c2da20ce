import type { Checkpoint, TensorEntry } from '../../src/lib/policy/weights.ts';

/**
 * A weights checkpoint in a form `page.evaluate` can carry between the page and the bench
 * (an ArrayBuffer cannot cross; an array of numbers can).
 */
export interface PortableCheckpoint {
  format: Checkpoint['format'];
  model: Checkpoint['model'];
  step: number;
  entries: TensorEntry[];
  values: number[];
}

/** Key of the trained policy in the bench's `shared` map (set by `learn`, read by `tasks`). */
export const TRAINED_POLICY = 'learn.policy';
