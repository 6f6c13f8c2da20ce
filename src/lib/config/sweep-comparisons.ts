import { SCHEDULES } from './run-config';

/**
 * A named comparison the sweep form offers in one click: a choice field and the choices it runs
 * (a module apart from `field-sweep.ts`, which the first screen loads: the form loads lazily).
 */
export interface SweepComparison {
  label: string;
  path: string;
  values: readonly string[];
}

/**
 * The comparisons of the seed's two systems: the update strategies (LoRA aside: it needs
 * `policy.lora`; auto starts as full), and the schedules of rollout jobs.
 */
export const SWEEP_COMPARISONS: readonly SweepComparison[] = [
  { label: 'Strategies', path: 'learner.strategy', values: ['full', 'frozen', 'selective', 'gradual'] },
  { label: 'Scheduling', path: 'pipeline.schedule', values: SCHEDULES },
];
