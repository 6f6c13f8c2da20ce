import { describe, expect, it } from 'vitest';
import type { Task } from '../env/suite';
import { RUN, VOCAB_SIZE } from '../env/vocab';
import type { Relabelled } from '../rl/hindsight';
import type { Trajectory } from '../rl/trajectory';
import {
  defaultRunConfig,
  runConfigFromJson,
  runConfigToJson,
  withOverrides,
  type RunOverrides,
  validateRunConfig,
} from '../config/run-config';
import { scheduledRate } from '../rl/learner-config';
import { CodeJobSource } from './code-workload';
import type { PlayedGroup } from './types';

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

function trajectory(t: Task, solved: boolean): Trajectory {
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
    parts: { pass: solved ? 1 : 0, ranOk: 0, closeness: 0, turnCost: 0, noSubmit: 0, total: solved ? 1 : 0 },
  };
}

/** A finished group of `n` episodes of `t`; `solves(i)` says which episodes solved it. */
function group(jobId: number, t: Task, solves: (i: number) => boolean, n = 4): PlayedGroup {
  return {
    jobId,
    status: 'done',
    trajectories: Array.from({ length: n }, (_, i) => trajectory(t, solves(i))),
    relabelled: [],
    seqs: Array.from({ length: n }, (_, i) => jobId * n + i),
    oldestVersion: 0,
    newestVersion: 0,
    interrupted: 0,
    startedAt: 0,
    endedAt: 0,
  };
}

/** The default run config with `overrides` set. */
const config = (overrides: RunOverrides = {}) => withOverrides(defaultRunConfig(), overrides);
const DEFAULTS = defaultRunConfig();

describe('CodeJobSource', () => {
  it('starts from a stored config that lacks fields (hindsight’s among them), as read back', () => {
    const json = JSON.parse(JSON.stringify(runConfigToJson(defaultRunConfig()))) as {
      hindsight: Record<string, unknown>;
      storage?: unknown;
    };
    delete json.hindsight.taskFraction;
    delete json.storage;
    const back = runConfigFromJson(json as unknown as Record<string, unknown>);
    expect(() => new CodeJobSource(TASKS, back)).not.toThrow();
  });

  it('draws from the curriculum level, and promotes when the level is solved', () => {
    const src = new CodeJobSource(
      TASKS,
      config({ task: { curriculum: { enabled: true, window: 8, promoteAt: 0.7 } } }),
    );
    for (let i = 0; i < 20; i++) expect(src.nextTask().task.level).toBe('easy');
    // Every episode of one task solved is a third of the level's three tasks.
    src.record(group(0, TASKS[0] as Task, () => true, 8));
    expect(src.curriculum.view()).toMatchObject({ level: 'easy', rate: 1 / 3, tasks: 3, tried: 1 });
    src.record(group(1, TASKS[1] as Task, () => true, 8));
    src.record(group(2, TASKS[2] as Task, () => false, 8)); // 16 / 24 < 0.7
    expect(src.curriculum.level).toBe('easy');
    src.record(group(3, TASKS[2] as Task, () => true, 1)); // its window slides: 17 / 24 ≥ 0.7
    expect(src.curriculum.level).toBe('medium');
    const drawn = Array.from({ length: 40 }, () => src.nextTask());
    // Mostly the new level at class normal; a review fraction of easier tasks at class low.
    expect(drawn.filter((d) => d.cls === 'normal').every((d) => d.task.id === 'm1')).toBe(true);
    expect(drawn.filter((d) => d.cls === 'low').every((d) => d.task.level === 'easy')).toBe(true);
  });

  it('with the curriculum off, draws from every level', () => {
    const src = new CodeJobSource(TASKS, config({ task: { candidates: 1, curriculum: { enabled: false } } }));
    const seen = new Set(Array.from({ length: 200 }, () => src.nextTask().task.id));
    expect(seen).toEqual(new Set(TASKS.map((t) => t.id)));
  });

  it('prefers the task whose success rate is nearest 0.5 (its learning value)', () => {
    const src = new CodeJobSource(TASKS.slice(0, 2), config({ task: { candidates: 8 } }));
    src.record(group(0, TASKS[0] as Task, () => true, 20)); // e1 always solved: low value
    src.record(group(1, TASKS[1] as Task, (i) => i % 2 === 0, 20)); // e2 half: the most value
    expect(src.value('e2')).toBeGreaterThan(src.value('e1'));
    const picks = Array.from({ length: 50 }, () => src.nextTask().task.id);
    expect(picks.filter((id) => id === 'e2').length).toBeGreaterThan(45);
  });

  it('under expected-reward, prefers the task of the highest expected return; an untried one is optimistic', () => {
    const src = new CodeJobSource(
      TASKS.slice(0, 3),
      config({ task: { candidates: 8 }, pipeline: { schedule: 'expected-reward' } }),
    );
    // An untried task expects what a first-turn solve earns before its turn cost.
    expect(src.rewards.of('e1')).toBeCloseTo(1 + 0.2 + 0.05);
    src.record(group(0, TASKS[0] as Task, () => true, 20)); // e1: return 1
    src.record(group(1, TASKS[1] as Task, (i) => i % 2 === 0, 20)); // e2: 0.5 (the learning value's pick)
    src.record(group(2, TASKS[2] as Task, () => false, 20)); // e3: 0
    expect(src.rewards.of('e1')).toBeCloseTo(1);
    expect(src.rewards.of('e2')).toBeCloseTo(0.5, 1); // recent returns weigh more: the last, 0, pulls it below
    const drawn = Array.from({ length: 50 }, () => src.nextTask());
    expect(drawn.filter((d) => d.task.id === 'e1').length).toBeGreaterThan(45);
    // The job carries the expected return it was chosen by, beside its learning value.
    const e1 = drawn.find((d) => d.task.id === 'e1');
    expect(e1?.expectedReward).toBeCloseTo(1);
    expect(e1?.value).toBeCloseTo(src.value('e1'));
  });

  it('under fifo, plays the first task drawn whatever its record; the random draws are those of the default', () => {
    const over = { task: { candidates: 8 }, pipeline: { schedule: 'fifo' as const } };
    const fifo = new CodeJobSource(TASKS.slice(0, 2), config(over));
    const uniform = new CodeJobSource(TASKS.slice(0, 2), config({ task: { candidates: 1 } }));
    for (const src of [fifo, uniform]) {
      src.record(group(0, TASKS[0] as Task, () => true, 20));
      src.record(group(1, TASKS[1] as Task, (i) => i % 2 === 0, 20));
    }
    const picks = Array.from({ length: 200 }, () => fifo.nextTask().task.id);
    // Neither value wins: about half each, unlike the learning value's 45 of 50 above.
    const e2 = picks.filter((id) => id === 'e2').length;
    expect(e2).toBeGreaterThan(70);
    expect(e2).toBeLessThan(130);
    // The first of 8 draws is what a 1-candidate source draws first.
    expect(new CodeJobSource(TASKS.slice(0, 2), config(over)).nextTask().task.id).toBe(
      new CodeJobSource(TASKS.slice(0, 2), config({ task: { candidates: 1 } })).nextTask().task.id,
    );
    expect(uniform.nextTask()).toBeDefined();
  });

  it('with valueWindow, values a task by its recent success rate rather than the whole run', () => {
    // 40 failures, then 40 successes: half over the run (the highest value), solved lately.
    const play = (src: CodeJobSource) => {
      src.record(group(0, TASKS[0] as Task, () => false, 40));
      src.record(group(1, TASKS[0] as Task, () => true, 40));
    };
    const lifetime = new CodeJobSource(TASKS, config({ task: { valueWindow: 0 } }));
    const recent = new CodeJobSource(TASKS, config({ task: { valueWindow: 10 } }));
    play(lifetime);
    play(recent);
    expect(lifetime.records.get('e1')).toEqual([80, 40]);
    expect(lifetime.value('e1')).toBeCloseTo(0.25, 6);
    // Weights 0.9^k: the 40 successes count 10·(1 − 0.9^40) ≈ 9.85 of ≈ 9.998 attempts.
    const [n, solved] = recent.records.get('e1') ?? [0, 0];
    expect(n).toBeCloseTo(10 * (1 - 0.9 ** 80), 6);
    expect(solved).toBeCloseTo(10 * (1 - 0.9 ** 40), 6);
    expect(recent.value('e1')).toBeLessThan(0.1);
    expect(() => new CodeJobSource(TASKS, config({ task: { valueWindow: 0.5 } }))).toThrow(/valueWindow/);
  });

  it('gives each episode its group-relative advantage on its own tokens', () => {
    // In each group of 4, sample 0 solves: RLOO gives it 1 − 0 = 1 and the others 0 − 1/3.
    const src = new CodeJobSource(TASKS);
    const { batch: b, priorities } = src.batch(
      [group(0, TASKS[0] as Task, (i) => i === 0), group(1, TASKS[1] as Task, () => false)],
      [1, 1],
    );
    const T = b.length;
    // Positions 0 and 1 predict the policy's tokens 1 and 2; position 2 predicts nothing.
    expect(Array.from(b.mask.slice(0, 3))).toEqual([1, 1, 0]);
    expect(b.advantages[0]).toBeCloseTo(1, 6);
    expect(b.advantages[2]).toBe(0);
    expect(b.advantages[1 * T + 1]).toBeCloseTo(-1 / 3, 6);
    // The second group all failed: no signal, lowest replay priority.
    expect(b.advantages[4 * T]).toBe(0);
    expect(priorities[0]).toBeCloseTo((1 + 3 / 3) / 4, 6);
    expect(priorities[1]).toBe(0);
  });

  it('mixes the sandbox ms of each episode into its return when the resource term is on', () => {
    const g = group(0, TASKS[0] as Task, () => true); // all solved alike: no signal from quality
    g.episodeSandboxMs = [0, 2, 4, 8];
    const plain = new CodeJobSource(TASKS).batch([g], [1]).batch;
    for (let b = 0; b < 4; b++) expect(plain.advantages[b * plain.length]).toBe(0);
    const mix = { learner: { rewardQuality: 0.6, rewardEfficiency: 0.3, rewardResource: 0.1 } };
    const src = new CodeJobSource(TASKS, config({ ...mix, pipeline: { budgetSandboxMs: 8 } }));
    const b = src.batch([g], [1]).batch;
    // Resource shares 1, 0.75, 0.5, 0: RLOO against the mean of the other three, × 0.1.
    const resource = [1, 0.75, 0.5, 0];
    const sum = resource.reduce((a, x) => a + x, 0);
    resource.forEach((r, i) => expect(b.advantages[i * b.length]).toBeCloseTo(0.1 * (r - (sum - r) / 3), 6));
    // Without its void episodes (1 and 3) a group keeps each episode's own ms: 0 and 4.
    g.trajectories = g.trajectories.map((tr, i) => (i % 2 === 1 ? { ...tr, voidTurn: true as const } : tr));
    const dropping = new CodeJobSource(
      TASKS,
      config({ ...mix, learner: { ...mix.learner, dropVoid: true }, pipeline: { budgetSandboxMs: 8 } }),
    );
    const d = dropping.batch([g], [1]).batch;
    expect(d.advantages[0]).toBeCloseTo(0.1 * (1 - 0.5), 6);
    expect(d.advantages[d.length]).toBeCloseTo(0.1 * (0.5 - 1), 6);
    expect(() => validateRunConfig(config({ ...mix }))).toThrow(/set pipeline.budgetSandboxMs/);
    expect(() =>
      validateRunConfig(
        config({ ...mix, pipeline: { budgetSandboxMs: 8 }, learner: { ...mix.learner, estimator: 'gae' } }),
      ),
    ).toThrow(/need learner.estimator rloo or grpo, not gae/);
  });

  it('with dropVoid, leaves void episodes out of advantages and rows; all of them when none would stay', () => {
    const t = TASKS[0] as Task;
    const g = group(0, t, (i) => i < 2);
    // Episode 1 (solved) and episode 3 (failed) had a void turn.
    g.trajectories = g.trajectories.map((tr, i) => (i % 2 === 1 ? { ...tr, voidTurn: true as const } : tr));
    const kept = new CodeJobSource(TASKS, config({ learner: { dropVoid: true } })).batch([g], [1]).batch;
    expect(kept.batch).toBe(2);
    // RLOO over the two kept (one solved, one not): +1 and −1.
    expect(kept.advantages[1]).toBeCloseTo(1, 6);
    expect(kept.advantages[kept.length + 1]).toBeCloseTo(-1, 6);
    expect(new CodeJobSource(TASKS).batch([g], [1]).batch.batch).toBe(4);
    const allVoid = { ...g, trajectories: g.trajectories.map((tr) => ({ ...tr, voidTurn: true as const })) };
    const src = new CodeJobSource(TASKS, config({ learner: { dropVoid: true } }));
    expect(src.batch([allVoid], [1]).batch.batch).toBe(4);
  });

  it('importance weights scale the advantages of their group', () => {
    const src = new CodeJobSource(TASKS);
    const { batch: b } = src.batch([group(0, TASKS[0] as Task, (i) => i === 0)], [0.5]);
    expect(b.advantages[0]).toBeCloseTo(0.5, 6);
    // ... and its value loss, through the batch's weights (every position of its rows).
    expect(b.weights?.length).toBe(b.batch * b.length);
    expect(b.weights?.every((w) => w === 0.5)).toBe(true);
    // FIFO mode (every weight 1) sends no weights.
    expect(src.batch([group(0, TASKS[0] as Task, (i) => i === 0)], [1]).batch.weights).toBeUndefined();
  });

  it('with GAE, gives per-token advantages from the recorded values', () => {
    const src = new CodeJobSource(TASKS, config({ learner: { estimator: 'gae' } }));
    const { batch: b } = src.batch([group(0, TASKS[0] as Task, (i) => i === 0)], [1]);
    // Solved episodes (return 1) get a positive normalised advantage, the others negative.
    expect(b.advantages[1]).toBeGreaterThan(0);
    expect(b.advantages[b.length + 1]).toBeLessThan(0);
    expect(b.returns[1]).toBeCloseTo(1, 6);
  });

  it('saves and restores its progress (a resumed run)', () => {
    const src = new CodeJobSource(
      TASKS,
      config({ task: { curriculum: { enabled: true, window: 4, promoteAt: 0.7 } } }),
    );
    // Solved groups of the three easy tasks promote (at 9 of 12 results), then a group of the medium task.
    for (const [i, t] of TASKS.slice(0, 3).entries()) src.record(group(i, t, () => true));
    src.record(group(3, TASKS[3] as Task, (i) => i === 0));
    expect(src.curriculum.view()).toMatchObject({ level: 'medium', seen: 4, tried: 1, rate: 1 / 4 });
    const again = new CodeJobSource(TASKS, src.config);
    again.restore(JSON.parse(JSON.stringify(src.progress())));
    expect(again.curriculum.view()).toEqual(src.curriculum.view()); // the promotion included
    expect(again.curriculum.view().promotions).toEqual([{ from: 'easy', to: 'medium', episode: 9 }]);
    expect(again.value('m1')).toBe(src.value('m1'));
  });

  it('poses relabelled tasks as jobs at `taskFraction`, outside the curriculum', () => {
    const posing = { ...DEFAULTS.hindsight, samplesPerBatch: 2, taskFraction: 0.5 };
    const posedTask: Task = { ...task('hindsight:5,6', 'easy') };
    const relabelled: Relabelled = {
      key: 'easy:hindsight:5,6',
      length: 1,
      task: posedTask,
      trajectory: { ...trajectory(posedTask, true), group: 'hindsight' },
    };
    const src = new CodeJobSource(TASKS, config({ hindsight: posing }));
    // An empty pool poses nothing.
    expect(Array.from({ length: 50 }, () => src.nextTask().task.id)).not.toContain(posedTask.id);
    src.record({ ...group(0, TASKS[0] as Task, () => false), relabelled: [relabelled] });
    const ids = Array.from({ length: 1000 }, () => src.nextTask().task.id);
    const share = ids.filter((id) => id === posedTask.id).length / ids.length;
    expect(src.posed).toBe(ids.filter((id) => id === posedTask.id).length);
    expect(share).toBeGreaterThan(0.45);
    expect(share).toBeLessThan(0.55);
    // Episodes of a posed task update its learning value, not the curriculum's level statistics.
    const before = src.curriculum.view();
    src.record(group(1, posedTask, () => true));
    expect(src.curriculum.view()).toEqual(before);
    const [attempts, solved] = src.records.get(posedTask.id) ?? [0, 0];
    expect(attempts).toBeGreaterThan(3.9); // 4 episodes, recency-weighted (`valueWindow`)
    expect(solved).toBe(attempts);
    // A resumed run starts with an empty pool, so the posed tasks' records are not saved.
    expect(Object.keys(src.progress().taskRecords ?? {})).toEqual(['e1']);
    // taskFraction 0 never poses one.
    const off = new CodeJobSource(TASKS, config({ hindsight: { ...posing, taskFraction: 0 } }));
    off.record({ ...group(0, TASKS[0] as Task, () => false), relabelled: [relabelled] });
    expect(Array.from({ length: 200 }, () => off.nextTask().task.id)).not.toContain(posedTask.id);
  });

  it('adds relabelled episodes (hindsight) to each batch with their advantage and an unknown behaviour log-prob', () => {
    const hindsight = { ...DEFAULTS.hindsight, samplesPerBatch: 3, advantage: 0.7 };
    const src = new CodeJobSource(TASKS, config({ hindsight }));
    const t = TASKS[0] as Task;
    const relabelled: Relabelled = {
      key: 'k',
      length: 1,
      task: t,
      trajectory: { ...trajectory(t, true), group: 'hindsight', logProbs: [0, NaN, NaN] },
    };
    const played = { ...group(0, t, () => false), relabelled: [relabelled] };
    src.record(played);
    expect(src.hindsight.size).toBe(1);
    const { batch: b, priorities } = src.batch([played], [1]);
    expect(b.batch).toBe(4 + 3);
    expect(priorities).toHaveLength(1);
    // Rows are padded to the longest (3 tokens) rounded up to 8, not to the whole context.
    expect(b.length).toBe(8);
    for (let row = 4; row < 7; row++) {
      expect(b.advantages[row * 8]).toBeCloseTo(0.7, 6);
      expect(b.behavLogp?.[row * 8]).toBeNaN();
    }
    // Hindsight off: the batch is the groups' episodes alone.
    const off = new CodeJobSource(TASKS, config({ hindsight: { ...hindsight, samplesPerBatch: 0 } }));
    off.record(played);
    expect(off.batch([played], [1]).batch.batch).toBe(4);
  });
});

describe('the learning-rate schedule', () => {
  it('is constant with no half-life, halves every half-life, and stops at a tenth', () => {
    const cfg = { learningRate: 4e-3, lrHalfLife: 0 };
    expect([0, 100, 10_000].map((v) => scheduledRate(cfg, v))).toEqual([4e-3, 4e-3, 4e-3]);
    const halving = { learningRate: 4e-3, lrHalfLife: 100 };
    expect(scheduledRate(halving, 0)).toBe(4e-3);
    expect(scheduledRate(halving, 100)).toBeCloseTo(2e-3, 12);
    expect(scheduledRate(halving, 250)).toBeCloseTo(4e-3 * 0.5 ** 2.5, 12);
    expect(scheduledRate(halving, 1000)).toBeCloseTo(4e-4, 12);
  });
});

describe('hints on tool-use tasks', () => {
  const tool: Task = {
    id: 'tool:x+1',
    level: 'easy',
    kind: 'tooluse',
    examples: [{ input: 1, output: 2 }],
    tests: [0, 2, 3].map((x) => ({ input: x, output: x + 1 })),
    hidden: [{ input: 9, output: 10 }],
  };
  const shown = (src: CodeJobSource) =>
    Array.from({ length: 200 }, () => src.nextTask().task.examples.length);

  it('show a second example at the set share, fading as the task succeeds; none when off', () => {
    const off = new CodeJobSource([tool], config({ task: { curriculum: { enabled: false } } }));
    expect(shown(off).every((n) => n === 1)).toBe(true);
    const on = new CodeJobSource(
      [tool],
      config({ task: { curriculum: { enabled: false }, hintFraction: 0.5 } }),
    );
    const early = shown(on).filter((n) => n === 2).length / 200;
    expect(early).toBeGreaterThan(0.35);
    expect(early).toBeLessThan(0.65);
    on.record(group(0, tool, () => true, 8)); // every episode solved: the hint fades out
    expect(shown(on).every((n) => n === 1)).toBe(true);
  });
});

describe('starts near the goal', () => {
  const tool = {
    id: 'tool:x+3',
    level: 'easy' as const,
    kind: 'tooluse' as const,
    program: 'x+3',
    examples: [{ input: 1, output: 4 }],
    tests: [0, 2, 3].map((x) => ({ input: x, output: x + 3 })),
    hidden: [{ input: 9, output: 12 }],
  };
  const opened = (src: CodeJobSource) => Array.from({ length: 200 }, () => src.nextTask().task.opening);

  it('begin a share of tool-use jobs with a wrong program already run, its outputs those of the tests', () => {
    expect(opened(new CodeJobSource([tool], config({}))).every((o) => o === undefined)).toBe(true);
    const src = new CodeJobSource(
      [tool],
      config({ task: { curriculum: { enabled: false }, openingFraction: 0.5 } }),
    );
    const openings = opened(src).filter((o) => o !== undefined);
    expect(openings.length / 200).toBeGreaterThan(0.35);
    expect(openings.length / 200).toBeLessThan(0.65);
    for (const o of openings) {
      expect(o.program).not.toBe('x+3');
      expect(o.outputs).toHaveLength(3);
      expect(o.outputs.every((y, i) => y === tool.tests[i]?.output)).toBe(false);
    }
    // Starts near the goal that end solved (their <run> is not the policy's) fade the share out.
    const solvedOpening = group(1, tool, () => true, 8);
    for (const tr of solvedOpening.trajectories) {
      tr.tokens = [1, RUN, 3];
      tr.owned = [0, 0, 1];
    }
    for (let k = 0; k < 40; k++) src.record(solvedOpening);
    expect(opened(src).filter((o) => o !== undefined).length / 200).toBeLessThan(0.05);
  });
});
