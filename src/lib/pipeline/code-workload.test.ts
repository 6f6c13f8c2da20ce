import { describe, expect, it } from 'vitest';
import type { Task } from '../env/suite';
import { VOCAB_SIZE } from '../env/vocab';
import { DEFAULT_MODEL_ARGS } from '../policy/config';
import type { StepMetrics } from '../policy/trainer';
import type { Checkpoint } from '../policy/weights';
import type { TokenBatch } from '../rl/batch';
import type { Trajectory } from '../rl/trajectory';
import { CodeWorkload, DEFAULT_CODE_RUN, type RolloutPort, type TrainerPort } from './code-workload';
import { SyncLoop } from './sync-loop';

const task = (id: string, level: Task['level']): Task => ({
  id,
  level,
  examples: [{ input: 1, output: 1 }],
  hidden: [{ input: 2, output: 2 }],
});
const TASKS = [
  task('e1', 'easy'),
  task('e2', 'easy'),
  task('e3', 'easy'),
  task('m1', 'medium'),
  task('h1', 'hard'),
];

/** A rollout that solves every task whose id is in `solves`, with return 1 (else 0). */
class FakeRollout implements RolloutPort {
  loaded: number[] = [];
  collected: string[][] = [];
  constructor(private readonly solves: (t: Task, i: number) => boolean) {}
  async collect(req: { tasks: Task[]; samples: number }): Promise<Trajectory[]> {
    this.collected.push(req.tasks.map((t) => t.id));
    return req.tasks.flatMap((t) =>
      Array.from({ length: req.samples }, (_, i) => {
        const solved = this.solves(t, i);
        return {
          taskId: t.id,
          level: t.level,
          group: t.id,
          tokens: [1, 2, 3],
          owned: [0, 1, 1],
          rewards: [0, 0, solved ? 1 : 0],
          logProbs: [0, -1, -1],
          values: [0, 0.1, 0.2],
          versions: [-1, 0, 0],
          legal: new Uint8Array(3 * VOCAB_SIZE).fill(1),
          solved,
          turns: 1,
          return: solved ? 1 : 0,
          parts: {
            pass: solved ? 1 : 0,
            ranOk: 0,
            closeness: 0,
            turnCost: 0,
            noSubmit: 0,
            total: solved ? 1 : 0,
          },
        };
      }),
    );
  }
  async loadPolicy(_c: Checkpoint, v: number): Promise<void> {
    this.loaded.push(v);
  }
}

class FakeTrainer implements TrainerPort {
  batches: TokenBatch[] = [];
  async trainBatch(batch: TokenBatch): Promise<StepMetrics> {
    this.batches.push(batch);
    return {
      step: this.batches.length,
      lossKind: 'decoupled',
      loss: 0,
      pgLoss: 0,
      valueLoss: 0,
      entropy: 0,
      gradNorm: 0,
      approxKl: 0,
      clipFrac: 0,
      wMean: 1,
      wMax: 1,
      maskedFrac: 0,
      learningRate: 1e-3,
      ms: 1,
    };
  }
  async exportPolicy(): Promise<Checkpoint> {
    return {
      format: 'sandbox-rl-lab/weights@1',
      model: DEFAULT_MODEL_ARGS,
      params: { entries: [], data: new ArrayBuffer(0) },
      step: 0,
    };
  }
}

describe('synchronous training loop (η = 0)', () => {
  it('publishes version 0, then one version per update, each adopted by the rollout', async () => {
    const rollout = new FakeRollout(() => false);
    const loop = new SyncLoop(new CodeWorkload(rollout, new FakeTrainer(), TASKS));
    const r1 = await loop.iterate();
    const r2 = await loop.iterate();
    expect(rollout.loaded).toEqual([0, 1, 2]);
    expect([r1.collectedWith, r1.published, r2.collectedWith, r2.published]).toEqual([0, 1, 1, 2]);
    expect(r1.stats.episodes).toBe(DEFAULT_CODE_RUN.tasksPerBatch * DEFAULT_CODE_RUN.groupSize);
  });

  it('trains only on the curriculum level, and promotes when the level is solved', async () => {
    const rollout = new FakeRollout((t) => t.level === 'easy');
    const work = new CodeWorkload(rollout, new FakeTrainer(), TASKS, {
      ...DEFAULT_CODE_RUN,
      curriculum: { enabled: true, window: 8, promoteAt: 0.7 },
    });
    const loop = new SyncLoop(work);
    expect(work.curriculum.level).toBe('easy');
    await loop.iterate();
    expect(rollout.collected[0]?.every((id) => id.startsWith('e'))).toBe(true);
    expect(work.curriculum.level).toBe('medium'); // 16 solved easy episodes ≥ a window of 8 at 0.7
    await loop.iterate();
    expect(rollout.collected[1]).toEqual(['m1', 'm1', 'm1', 'm1']);
  });

  it('with the curriculum off, draws from every level', async () => {
    const rollout = new FakeRollout(() => false);
    const loop = new SyncLoop(
      new CodeWorkload(rollout, new FakeTrainer(), TASKS, {
        ...DEFAULT_CODE_RUN,
        tasksPerBatch: 5,
        curriculum: { ...DEFAULT_CODE_RUN.curriculum, enabled: false },
      }),
    );
    await loop.iterate();
    expect(new Set(rollout.collected[0])).toEqual(new Set(TASKS.map((t) => t.id)));
  });

  it('gives each episode its group-relative advantage on its own tokens', async () => {
    // In each group of 4, sample 0 solves: RLOO gives it 1 − 0 = 1 and the others 0 − 1/3.
    const trainer = new FakeTrainer();
    const loop = new SyncLoop(new CodeWorkload(new FakeRollout((_t, i) => i === 0), trainer, TASKS));
    await loop.iterate();
    const b = trainer.batches[0];
    if (!b) throw new Error('no batch');
    const T = b.length;
    // Positions 0 and 1 predict the policy's tokens 1 and 2; position 2 predicts nothing.
    expect(Array.from(b.mask.slice(0, 3))).toEqual([1, 1, 0]);
    expect(b.advantages[0]).toBeCloseTo(1, 6);
    expect(b.advantages[1]).toBeCloseTo(1, 6);
    expect(b.advantages[2]).toBe(0);
    expect(b.advantages[1 * T + 1]).toBeCloseTo(-1 / 3, 6);
  });

  it('with GAE, gives per-token advantages from the recorded values', async () => {
    const trainer = new FakeTrainer();
    const loop = new SyncLoop(
      new CodeWorkload(new FakeRollout((_t, i) => i === 0), trainer, TASKS, {
        ...DEFAULT_CODE_RUN,
        estimator: 'gae',
      }),
    );
    await loop.iterate();
    const b = trainer.batches[0];
    if (!b) throw new Error('no batch');
    // Solved episodes (return 1) get a positive normalised advantage, the others negative.
    expect(b.advantages[1]).toBeGreaterThan(0);
    expect(b.advantages[b.length + 1]).toBeLessThan(0);
    expect(b.returns[1]).toBeCloseTo(1, 6);
  });
});
