/**
 * How long a sweep takes, as the sweep form and the train bar say it: a module apart from
 * `field-sweep.ts`, which loads with the form and the sweep.
 */

/**
 * Seconds a leg takes per trained episode, as the staleness sweep measured it on the page's
 * defaults (one rollout worker, trainer on wasm, 2 shared cores: six legs of 1 600 episodes in
 * 250 s), and the seconds each leg spends starting (worker, weights) and evaluating.
 */
export const SWEEP_SECONDS_PER_EPISODE = 0.026;
export const SWEEP_SECONDS_PER_LEG = 10;

/** About how long `legs` legs of `samples` episodes take, seconds (`SWEEP_SECONDS_PER_EPISODE`). */
export function sweepSeconds(legs: number, samples: number): number {
  return legs * (samples * SWEEP_SECONDS_PER_EPISODE + SWEEP_SECONDS_PER_LEG);
}

/** A sweep's time as its estimate says it: `about 40 s`, `about 6 min`. */
export function sweepTimeText(seconds: number): string {
  return seconds < 90
    ? `about ${Math.round(seconds / 5) * 5 || 5} s`
    : `about ${Math.round(seconds / 60)} min`;
}
