import { describe, expect, it } from 'vitest';
import { customBatch } from './workload';
import { fakeTrajectory as traj } from './fixture';

describe('custom environments in the pipeline', () => {
  it('batches episodes with discounted returns-to-go and their behaviour log-probs', () => {
    const b = customBatch([traj([1, 0, 2], [-0.1, -0.2, -0.3]), traj([5], [-0.7])], 1, 0.5);
    expect(b.steps).toBe(4);
    // G2 = 2, G1 = 0 + 0.5·2 = 1, G0 = 1 + 0.5·1 = 1.5; the second episode starts afresh.
    expect(Array.from(b.returns)).toEqual([1.5, 1, 2, 5]);
    expect(Array.from(b.behavLogp)).toEqual([-0.1, -0.2, -0.3, -0.7].map(Math.fround));
    expect(Array.from(b.actions)).toEqual([0, 1, 0, 0]);
    expect(b.episodeReturns).toEqual([3, 5]);
    expect(() => customBatch([traj([1, 1], [0, 0], 2)], 1, 0.9)).toThrow(
      /4 observation values for 2 steps of 1/,
    );
  });
});
