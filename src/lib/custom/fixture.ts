import type { CustomTrajectory } from './workload';

/**
 * For tests: an episode with these rewards and behaviour log-probs, played by version 0, taking
 * actions 0, 1, 0, …; each observation is `inputs` copies of the step's index.
 */
export function fakeTrajectory(rewards: number[], logProbs: number[], inputs = 1): CustomTrajectory {
  return {
    obs: Float32Array.from(rewards.flatMap((_, i) => Array.from({ length: inputs }, () => i))),
    actions: Int32Array.from(rewards.map((_, i) => i % 2)),
    rewards: Float32Array.from(rewards),
    logProbs: Float32Array.from(logProbs),
    versions: Int32Array.from(rewards.map(() => 0)),
    adoptions: [],
    return: rewards.reduce((a, b) => a + b, 0),
    solved: false,
  };
}
