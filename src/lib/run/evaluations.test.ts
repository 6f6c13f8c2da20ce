import 'fake-indexeddb/auto';
import { WorkerCrashed } from '../bridge/worker-errors';
import { describe, expect, it } from 'vitest';
import { DEFAULT_ENV_CONFIG, TOOLUSE_ENV_CONFIG, type EnvConfig } from '../env/config';
import type { EvalRow } from '../env/evaluate';
import { defaultRunConfig, withTaskKind, type RunConfig } from '../config/run-config';
import type { EvalPoint } from '../pipeline/types';
import { DEFAULT_MODEL_ARGS } from '../policy/config';
import { packParams } from '../policy/weights';
import { openLabDb, type LabDB } from '../storage/db';
import { ensureRun, putVersion } from '../storage/weights-store';
import type { GreedyPlayRequest } from '../../../workers/rollout.worker';
import { splitOf } from '../env/evaluate';
import { Evaluations, playableTasks, VersionGone, type EvaluatorHost } from './evaluations';

let n = 0;

const row = (split: EvalRow['split'], success: number, toolUse?: EvalRow['toolUse']): EvalRow => ({
  agent: 'policy',
  mode: 'greedy',
  split,
  level: 'all',
  episodes: 10,
  success,
  meanTurns: 1,
  meanReward: success,
  meanParts: { pass: 0, ranOk: 0, closeness: 0, turnCost: 0, noSubmit: 0, total: 0 },
  runsPerTask: 1,
  ...(toolUse ? { toolUse } : {}),
});

async function fixture(versions: number[]) {
  const db: LabDB = await openLabDb(`evaluations-test-${n++}`);
  await ensureRun(db, { id: 'run-e', name: 'run-e', config: {}, kind: 'code' });
  const params = await packParams(new Map());
  for (const version of versions)
    await putVersion(db, {
      runId: 'run-e',
      version,
      createdAt: 0,
      checkpoint: { format: 'sandbox-rl-lab/weights@1', model: DEFAULT_MODEL_ARGS, params, step: version },
      metrics: {},
      milestone: true,
    });
  const loaded: number[] = [];
  /** What each greedy export played: the version loaded, the tasks and the env. */
  const exported: { version: number; tasks: string[]; config?: EnvConfig }[] = [];
  /** The env each evaluation played with. */
  const configs: (EnvConfig | undefined)[] = [];
  /** What each greedy play asked the worker for. */
  const plays: GreedyPlayRequest[] = [];
  let made = 0;
  let crash: (m: string) => void = () => undefined;
  let answer: (() => void) | null = null;
  const scored: EvalPoint[] = [];
  const notices: string[] = [];
  const evaluations = new Evaluations({
    database: async () => db,
    createEvaluator: (onCrash): EvaluatorHost => {
      made += 1;
      // Like a bridge, a crash rejects the call in flight.
      let failInFlight: ((err: Error) => void) | null = null;
      crash = (m) => {
        onCrash(m);
        failInFlight?.(new WorkerCrashed(m));
      };
      let version = -1;
      return {
        api: {
          init: async () => ({ backend: 'cpu', adapter: null, fallbacks: [], initMs: 0, parameters: 0 }),
          loadPolicy: async (_c, v) => {
            version = v;
            loaded.push(v);
          },
          evaluate: async (req) => {
            configs.push(req.config);
            if (answer === null)
              await new Promise<void>((r, fail) => {
                answer = r;
                failInFlight = fail;
              });
            const toolUse = req.tasks.some((t) => t.kind === 'tooluse')
              ? {
                  solvedWithRun: 0.75,
                  successOneTurn: 0.25,
                  runFraction: 0.5,
                  reviseRate: 0.6,
                  copyRate: 0.1,
                }
              : undefined;
            return [row('train', version / 10, toolUse), row('heldOut', version / 20, toolUse)];
          },
          playGreedy: async (req) => {
            plays.push(req);
            const trajectory = {
              taskId: req.task.id,
              level: req.task.level,
              group: 'greedy',
              tokens: [],
              owned: [],
              rewards: [],
              logProbs: [],
              values: [],
              versions: [],
              legal: new Uint8Array(0),
              solved: false,
              turns: 0,
              return: version,
              parts: { pass: 0, ranOk: 0, closeness: 0, turnCost: 0, noSubmit: 0, total: version },
            };
            return { trajectory, turns: [] };
          },
          greedyExport: async (req) => {
            exported.push({ version, tasks: req.tasks.map((t) => t.id), config: req.config });
            return {
              rows: [],
              logits: {
                backend: 'cpu',
                policy: req.policy,
                model: DEFAULT_MODEL_ARGS,
                sequences: [],
                logits: [],
              },
            };
          },
        },
        terminate: () => undefined,
      };
    },
    clock: () => ({ seconds: 1, episodes: 2 }),
    scored: (_runId, p) => scored.push(p),
    notice: (m) => notices.push(m),
  });
  return {
    evaluations,
    loaded,
    exported,
    configs,
    plays,
    scored,
    notices,
    made: () => made,
    crash: (m: string) => crash(m),
    release: () => {
      const a = answer;
      answer = () => undefined;
      a?.();
    },
  };
}

/** The default config's task and env slices: an examples run on the built-in tasks. */
const BUILT_IN: Pick<RunConfig, 'task' | 'env'> = defaultRunConfig();

const settle = () => new Promise((r) => setTimeout(r, 10));

describe('Evaluations', () => {
  it('scores the asked version, or the newest where it was pruned', async () => {
    const f = await fixture([2, 4]);
    f.release();
    const p = await f.evaluations.evaluate({
      runId: 'run-e',
      settings: BUILT_IN,
      level: 'easy',
      version: 2,
    });
    expect(p).toMatchObject({
      iteration: 2,
      successTrain: 0.2,
      successHeldOut: 0.1,
      seconds: 1,
      episodes: 2,
    });
    const q = await f.evaluations.evaluate({
      runId: 'run-e',
      settings: BUILT_IN,
      level: 'easy',
      version: 3,
    });
    expect(q?.iteration).toBe(4);
  });

  it("scores a tool-use run with its own turns, with success at one turn and the runs' share", async () => {
    const f = await fixture([2]);
    f.release();
    const env = { ...TOOLUSE_ENV_CONFIG, maxTurns: 1 };
    const toolUse = withTaskKind(defaultRunConfig(), 'tooluse');
    const p = await f.evaluations.evaluate({
      runId: 'run-e',
      settings: { ...toolUse, env },
      level: 'easy',
    });
    expect(f.configs.at(-1)).toEqual(env);
    expect(p?.toolUse).toEqual({
      successOneTurn: 0.25,
      solvedWithRun: 0.75,
      meanTurns: 1,
      runFraction: 0.5,
      reviseRate: 0.6,
      copyRate: 0.1,
    });
    // With the kind's env, the kind's four turns.
    await f.evaluations.evaluate({ runId: 'run-e', settings: toolUse, level: 'easy' });
    expect(f.configs.at(-1)).toEqual(TOOLUSE_ENV_CONFIG);
    // An examples run plays the examples env, whatever its own, and has no tool-use figures.
    const q = await f.evaluations.evaluate({
      runId: 'run-e',
      settings: { ...BUILT_IN, env: { ...DEFAULT_ENV_CONFIG, maxTurns: 1 } },
      level: 'easy',
    });
    expect(f.configs.at(-1)).toEqual(DEFAULT_ENV_CONFIG);
    expect(q?.toolUse).toBeUndefined();
  });

  it('keeps one waiting request: a newer ask replaces it', async () => {
    const f = await fixture([1, 2, 3]);
    const ask = (version: number) =>
      f.evaluations.ask({ runId: 'run-e', settings: BUILT_IN, level: 'all', version });
    ask(1); // runs, and waits on the evaluator
    await settle();
    ask(2); // waits
    ask(3); // replaces 2
    f.release();
    await f.evaluations.idle();
    expect(f.scored.map((p) => p.iteration)).toEqual([1, 3]);
    await expect(
      f.evaluations.latest({ runId: 'run-e', settings: BUILT_IN, level: 'all' }),
    ).resolves.toMatchObject({ iteration: 3 });
  });

  it('a crash of the evaluator fails the evaluation in flight, and the next one starts a new worker', async () => {
    const f = await fixture([1]);
    f.evaluations.ask({ runId: 'run-e', settings: BUILT_IN, level: 'all' });
    await settle();
    f.crash('out of memory');
    await f.evaluations.idle();
    expect(f.notices).toEqual([
      'the evaluation worker crashed: out of memory',
      'evaluation failed: the worker crashed: out of memory',
    ]);
    f.release();
    await f.evaluations.latest({ runId: 'run-e', settings: BUILT_IN, level: 'all' });
    expect(f.made()).toBe(2);
  });

  it('plays an export greedily with the version it is given, after the evaluation in flight', async () => {
    const f = await fixture([1, 2]);
    f.evaluations.ask({ runId: 'run-e', settings: BUILT_IN, level: 'all', version: 1 });
    await settle();
    const checkpoint = {
      format: 'sandbox-rl-lab/weights@1' as const,
      model: DEFAULT_MODEL_ARGS,
      params: await packParams(new Map()),
      step: 2,
    };
    const env = { ...DEFAULT_ENV_CONFIG, maxTurns: 2 };
    const done = f.evaluations.greedyExport({ checkpoint, version: 2 }, undefined, {
      tasks: [{ id: 't1', level: 'easy', examples: [], hidden: [], heldOut: true }],
      config: env,
      sequences: 3,
      policy: 'run-e v2',
    });
    await settle();
    expect(f.exported).toEqual([]); // the evaluation still waits on the worker
    f.release();
    await expect(done).resolves.toMatchObject({ rows: [], logits: { policy: 'run-e v2' } });
    expect(f.loaded).toEqual([1, 2]);
    expect(f.exported).toEqual([{ version: 2, tasks: ['t1'], config: env }]);
  });

  it('says when a run has no stored version', async () => {
    const f = await fixture([]);
    await expect(f.evaluations.latest({ runId: 'run-e', settings: BUILT_IN, level: 'all' })).rejects.toThrow(
      'run run-e has no stored version',
    );
  });
});

describe('Evaluations.play', () => {
  const tasks = playableTasks(BUILT_IN);
  const held = tasks.find((t) => splitOf(t) === 'heldOut');
  const general = tasks.find((t) => splitOf(t) === 'generalisation');

  it("offers the run's training, held-out and generalisation tasks", () => {
    expect(held).toBeDefined();
    expect(general).toBeDefined();
    expect(tasks.some((t) => splitOf(t) === 'train')).toBe(true);
  });

  it('plays the asked version on the asked task with the env of its kind, after it is loaded', async () => {
    const f = await fixture([2, 4]);
    const heard: number[] = [];
    const played = await f.evaluations.play(
      { runId: 'run-e', settings: BUILT_IN, version: 2, taskId: held?.id ?? '' },
      () => heard.push(f.loaded.length),
    );
    expect(f.loaded).toEqual([2]);
    expect(heard).toEqual([1]); // told once the version was in the worker
    expect(f.plays).toHaveLength(1);
    expect(f.plays[0]).toMatchObject({ version: 2, task: { id: held?.id }, config: DEFAULT_ENV_CONFIG });
    expect(played).toMatchObject({ runId: 'run-e', version: 2, task: { id: held?.id, heldOut: true } });
    expect(played.trajectory.return).toBe(2); // the fake's return is the version it held
  });

  it('refuses a pruned version with VersionGone, without touching the worker', async () => {
    const f = await fixture([4]);
    const play = f.evaluations.play({
      runId: 'run-e',
      settings: BUILT_IN,
      version: 2,
      taskId: held?.id ?? '',
    });
    await expect(play).rejects.toBeInstanceOf(VersionGone);
    await expect(play).rejects.toThrow('version 2 of run-e is no longer stored');
    expect(f.loaded).toEqual([]);
    expect(f.made()).toBe(0);
  });

  it('refuses a task the run does not have', async () => {
    const f = await fixture([1]);
    await expect(
      f.evaluations.play({ runId: 'run-e', settings: BUILT_IN, version: 1, taskId: 'no-such-task' }),
    ).rejects.toThrow('run run-e has no task no-such-task');
    expect(f.plays).toEqual([]);
  });
});
