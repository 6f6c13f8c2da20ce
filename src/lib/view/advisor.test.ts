import { describe, expect, it } from 'vitest';
import { advise, WARM_UP_STEPS, type AdvisorInput } from './advisor';

/** A steady asynchronous run on a 4-core machine, neither side waiting long. */
const base: AdvisorInput = {
  eta: 4,
  workers: 3,
  cores: 4,
  batchGroups: 4,
  trainerBusy: 0.75,
  running: 6,
  waiting: 0,
  heldByEta: 0,
  maxConcurrent: 6,
  buffered: 2,
  generatedEpisodes: 1000,
  staleDroppedEpisodes: 0,
  replayOverflow: 0,
  trainSteps: 100,
  cacheHitRate: 0.3,
  trainerBackend: 'wasm',
};

describe('the bottleneck advisor', () => {
  it('says nothing before a few training steps', () => {
    const a = advise({ ...base, trainSteps: WARM_UP_STEPS - 1, trainerBusy: 1 });
    expect(a.bound).toBe('warming up');
    expect(a.tips).toEqual([]);
  });

  it('calls a run with the trainer busy and batches waiting train-bound; more workers would not help', () => {
    const a = advise({ ...base, trainerBusy: 0.98, buffered: 12 });
    expect(a.bound).toBe('train-bound');
    expect(a.reason).toContain('98 %');
    expect(a.reason).toContain('12 finished groups wait');
    expect(a.tips[0]).toMatch(/more rollout workers will not/);
    // 3 workers + the trainer fit 4 cores: no advice to drop one.
    expect(a.tips.some((t) => t.includes('fewer workers'))).toBe(false);
    // On 2 cores they crowd the trainer.
    const two = advise({ ...base, trainerBusy: 0.98, buffered: 12, cores: 2 });
    expect(two.tips.some((t) => t.includes('3 rollout workers and the trainer share 2 cores'))).toBe(true);
    // A trainer on the CPU is told about the GPU; one already on WebGPU is not.
    expect(a.tips.some((t) => t.startsWith('the trainer runs on wasm: a GPU'))).toBe(true);
    const gpu = advise({ ...base, trainerBusy: 0.98, buffered: 12, trainerBackend: 'webgpu' });
    expect(gpu.tips.some((t) => t.includes('a GPU'))).toBe(false);
  });

  it('calls a run whose trainer waits for data rollout-bound, and names the staleness bound when it keeps slots idle', () => {
    const held = advise({ ...base, trainerBusy: 0.4, buffered: 1, running: 2, heldByEta: 2 });
    expect(held.bound).toBe('rollout-bound');
    expect(held.reason).toContain('60 %');
    expect(held.tips[0]).toMatch(/η = 4\) keeps 2 free slots idle/);
    // Slots the bound holds would stay idle with a worker more: no such tip.
    expect(held.tips.some((t) => t.includes('rollout worker more'))).toBe(false);
    // Jobs requeued after a failure are not the bound's doing.
    const requeued = advise({ ...base, trainerBusy: 0.4, buffered: 1, running: 2, waiting: 5 });
    expect(requeued.tips.some((t) => t.includes('staleness bound'))).toBe(false);
    // Every slot busy, cores to spare: add a worker.
    const full = advise({ ...base, workers: 2, trainerBusy: 0.4, buffered: 0, running: 4, maxConcurrent: 4 });
    expect(full.tips).toContain('a rollout worker more would play more episodes at once.');
    // η = 0: waiting is the synchronous design.
    const sync = advise({ ...base, eta: 0, trainerBusy: 0.45, buffered: 0 });
    expect(sync.tips.some((t) => t.startsWith('η = 0 is synchronous'))).toBe(true);
    // At η = 0 too, a worker more would only add slots the bound keeps idle.
    const syncHeld = advise({ ...base, eta: 0, trainerBusy: 0.45, buffered: 0, running: 2, heldByEta: 2 });
    expect(syncHeld.tips.some((t) => t.startsWith('η = 0 is synchronous'))).toBe(true);
    expect(syncHeld.tips.some((t) => t.includes('rollout worker more'))).toBe(false);
  });

  it('a batch waiting for a half-idle trainer is not rollout-bound', () => {
    expect(advise({ ...base, trainerBusy: 0.4, buffered: 8 }).bound).toBe('balanced');
    expect(advise(base).bound).toBe('balanced');
    expect(advise(base).tips).toEqual([]);
  });

  it('says why a synchronous run is balanced with the trainer idle a third of the time', () => {
    // The synchronous preset promises that the advisor says why the trainer waits: at 62 % busy
    // it said only "neither side holds the other back much".
    const sync = advise({ ...base, eta: 0, trainerBusy: 0.62, buffered: 0 });
    expect(sync.bound).toBe('balanced');
    expect(sync.tips).toEqual([
      'η = 0 is synchronous: the trainer waits while every batch is played (the other 38 % of the time); η ≥ 1 overlaps the two.',
    ]);
  });

  it('flags stale drops above 10 %, replay overflow and a cache that answers most runs', () => {
    const a = advise({
      ...base,
      staleDroppedEpisodes: 150,
      replayOverflow: 3,
      eta: Infinity,
      cacheHitRate: 0.85,
    });
    expect(a.tips).toHaveLength(3);
    expect(a.tips[0]).toMatch(/^15 % of generated episodes were dropped as stale/);
    expect(a.tips[1]).toMatch(/^3 groups overflowed/);
    expect(a.tips[2]).toMatch(/^85 % of sandbox runs are cache hits/);
    expect(advise({ ...base, staleDroppedEpisodes: 100 }).tips).toEqual([]); // exactly 10 %: quiet
  });
});
