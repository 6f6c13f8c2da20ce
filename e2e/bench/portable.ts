/**
 * A weights checkpoint in a form `page.evaluate` can carry between the page and the bench
 * (an ArrayBuffer cannot cross; an array of numbers can). Shapes follow src/lib/policy/weights.ts.
 */
export interface PortableCheckpoint {
  format: string;
  model: Record<string, number>;
  step: number;
  entries: { name: string; shape: number[]; dtype: string; offset: number }[];
  values: number[];
}

/** Key of the trained policy in the bench's `shared` map (set by `learn`, read by `tasks`). */
export const TRAINED_POLICY = 'learn.policy';
