import { readFileSync } from 'node:fs';
import type { JSHandle } from 'playwright-core';
import { TOOLUSE_ENV_CONFIG, type EnvConfig } from '../../../src/lib/env/config.ts';
import { oneTurn, type EvalTask } from '../../../src/lib/env/evaluate.ts';
import { BUILT_IN_SEED } from '../../../src/lib/env/suite-entries.ts';
import { builtInTasks } from '../../../src/lib/env/task-kinds.ts';
import { runTrainingTasks } from '../../../src/lib/pipeline/training-tasks.ts';
import { DEFAULT_HINDSIGHT } from '../../../src/lib/rl/hindsight.ts';
import {
  fileFigures,
  fileSummary,
  meanSd,
  readToolUseFile,
  type FileFigures,
} from '../../../src/lib/run/tooluse-bench.ts';
import type { Scenario } from '../harness.ts';
import type { Lab } from '../../support/lab.ts';
import {
  defaultRunConfig,
  withinOverrides,
  withOverrides,
  type RunOverrides,
} from '../../../src/lib/config/run-config.ts';
import { openLab } from './pipeline.ts';
import { applyPreset, PRESETS } from '../../../src/lib/config/presets.ts';

const round = (v: number | null | undefined, d = 3) =>
  v === null || v === undefined || !Number.isFinite(v) ? null : Math.round(v * 10 ** d) / 10 ** d;

/** What one arm of one seed came to: greedy play of its newest version on the easy tasks. */
interface Arm {
  episodes: number;
  versions: number;
  seconds: number;
  successTrain: number;
  successHeldOut: number | null;
  /** Held-out: of the solved episodes, the share that used `<run>`; mean turns. */
  solvedWithRun: number | null;
  meanTurns: number | null;
  /** Held-out: share of episodes where the policy chose a `<run>` (an automatic first run left out). */
  runFraction: number | null;
  /** Held-out: of the failed runs followed by another turn, the share fixed next / only copied from the report. */
  reviseRate: number | null;
  copyRate: number | null;
  /** Held-out greedy success of the same policy made to submit at its first turn. */
  successForcedOneTurn: number | null;
  /** Greedy play of the newest version on the `--tasks` file's tasks, with the arm's env. */
  file?: FileFigures;
}

/** The arms `--arms` picks from: from the base, from fresh weights, and with one turn. */
const ARMS = ['base', 'scratch', 'one'] as const;

/**
 * Trains one arm from fresh weights on the easy tool-use tasks (DESIGN §3.1) with `env`, until
 * `limit` (seconds of training, or trained episodes), then evaluates its newest version greedily,
 * and on `fileTasks` (when given) in the run's env.
 */
async function trainArm(
  lab: JSHandle<Lab>,
  seed: number,
  env: EnvConfig,
  limit: { seconds: number } | { episodes: number },
  config: RunOverrides,
  fileTasks: EvalTask[] | null,
): Promise<Arm> {
  const settings = withinOverrides(
    { seed, task: { kind: 'tooluse', level: 'easy' }, env, hindsight: DEFAULT_HINDSIGHT },
    config,
  );
  // The env the run plays in (the page's panel settings are the defaults under the bench).
  const runEnv = withOverrides(defaultRunConfig(), settings).env;
  const r = await lab.evaluate(
    async (l, a) => {
      const t0 = performance.now();
      const started = l.run.start({
        evalEvery: 0,
        config: a.settings,
        ...('episodes' in a.limit ? { maxTrainedEpisodes: a.limit.episodes } : {}),
      });
      if ('seconds' in a.limit) {
        const s = a.limit.seconds;
        await Promise.race([started, new Promise((res) => setTimeout(res, s * 1000))]);
        await l.run.stop();
      }
      await started;
      if (l.run.error) return { error: l.run.error };
      const seconds = (performance.now() - t0) / 1000;
      const point = await l.run.evaluateLatest('easy');
      let file = null;
      if (a.fileTasks) {
        // The run's newest version, played greedily on the file's tasks by the tasks panel's worker.
        await l.tasks.loadRunPolicy(l.run.runId ?? '');
        file = await l.tasks.evaluateTasks(a.fileTasks, ['policy'], 0, undefined, a.runEnv);
      }
      return {
        error: null,
        seconds,
        point,
        file,
        episodes: l.run.dashboard?.counters.trainedEpisodes ?? 0,
        versions: l.run.steps.at(-1)?.version ?? 0,
      };
    },
    { settings, limit, fileTasks, runEnv },
  );
  if (r.error !== null || !r.point) throw new Error(`tool-use run failed: ${r.error ?? 'no evaluation'}`);
  return {
    episodes: r.episodes ?? 0,
    versions: r.versions ?? 0,
    seconds: round(r.seconds, 1) ?? 0,
    successTrain: r.point.successTrain,
    successHeldOut: r.point.successHeldOut,
    solvedWithRun: r.point.toolUse?.solvedWithRun ?? null,
    meanTurns: r.point.toolUse?.meanTurns ?? null,
    runFraction: r.point.toolUse?.runFraction ?? null,
    reviseRate: r.point.toolUse?.reviseRate ?? null,
    copyRate: r.point.toolUse?.copyRate ?? null,
    successForcedOneTurn: r.point.toolUse?.successOneTurn ?? null,
    ...(r.file ? { file: fileFigures(r.file) } : {}),
  };
}

/**
 * The sandbox as the agent's tool (DESIGN §3.1): per seed, the same architecture trained and
 * evaluated on the easy tool-use tasks with the kind's turn budget — from the tool-use preset's
 * revising base with its automatic first run, and from fresh weights — and with one turn (a
 * submit, no `<run>`) from fresh weights, at the first arm's trained episodes.
 */
const scenario: Scenario = {
  name: 'tooluse',
  description:
    'tool-use tasks (one example shown, `<run>` answers with a test report): per seed, held-out greedy success of a policy trained with the turn budget from the revising base (automatic first run), the same from fresh weights, and one trained and evaluated with one turn, at equal trained episodes; revise rate, copy rate, the policy’s own run share, success of the same policy forced to one turn; per-seed rows and mean ± sd; with --tasks FILE the same figures on that suite file’s tool-use tasks (tooluse.file.*)',
  async run({ baseUrl, launch, options, log, config }) {
    const seeds = (options.seeds?.[0] ?? '1,2,3').split(',').map(Number);
    const samples = options.samples?.[0] ? Number(options.samples[0]) : null;
    const seconds = Number(options.seconds?.[0] ?? 600);
    // `--arms base,scratch,one`: which arms train (all three by default); without the base arm the
    // others train `--samples` episodes, as many as a base arm of an earlier invocation trained.
    const arms = new Set((options.arms?.[0] ?? ARMS.join(',')).split(','));
    const unknown = [...arms].filter((a) => !(ARMS as readonly string[]).includes(a));
    if (unknown.length || arms.size === 0)
      throw new Error(`--arms takes some of ${ARMS.join(', ')}, not ${options.arms?.[0]}`);
    if (!arms.has('base') && !samples)
      throw new Error('--arms without base needs --samples N: the episodes the other arms train');
    const multi: EnvConfig = TOOLUSE_ENV_CONFIG;
    const single = oneTurn(TOOLUSE_ENV_CONFIG);
    const toolUse = PRESETS.find((p) => p.id === 'tooluse');
    if (!toolUse) throw new Error('no tool-use preset');
    // The preset as the page applies it: its config, and on tool-use tasks hindsight relabelling
    // off (`withTaskKind`), where the other arms relabel.
    const { hindsight } = applyPreset(defaultRunConfig(), toolUse);
    const fromBase = withinOverrides({ ...toolUse.config, hindsight }, config);
    // The suite file is read and checked before any training: a bad one stops the scenario here.
    // Every arm's easy training tasks, the wide families' functions too where an arm trains on them.
    const wide = [fromBase, config].some((o) => withOverrides(defaultRunConfig(), o).task.wide);
    const split = withOverrides(defaultRunConfig(), config).task.split;
    const training = runTrainingTasks(
      { suite: null, level: 'easy', wide },
      builtInTasks('tooluse', BUILT_IN_SEED, split),
    );
    const file = options.tasks?.[0]
      ? readToolUseFile(options.tasks[0], (p) => readFileSync(p, 'utf8'), training)
      : null;
    if (file) {
      const equal = Object.keys(file.equalTraining);
      log(
        `--tasks ${file.file}: ${file.tasks.length} tool-use tasks ("${file.name}")` +
          (file.skipped ? `, ${file.skipped} of another kind left out` : '') +
          (equal.length ? `; equal to a training task: ${equal.join(', ')}` : ''),
      );
    }
    const fileTasks = file?.tasks ?? null;
    const { lab, close } = await openLab(launch, baseUrl, options.backend?.[0]);
    const rows: { seed: number; multiTurn: Arm | null; fromScratch: Arm | null; oneTurn: Arm | null }[] = [];
    try {
      for (const seed of seeds) {
        // The base arm trains `--samples` episodes, or `--seconds`; the others then as many episodes.
        const limit = samples ? { episodes: samples } : { seconds };
        const m = arms.has('base')
          ? await trainArm(lab, seed, { ...multi, autoRun: true }, limit, fromBase, fileTasks)
          : null;
        if (m) log(`seed ${seed}, ${multi.maxTurns} turns from the base: ${JSON.stringify(m)}`);
        const episodes = { episodes: samples ?? m?.episodes ?? 0 };
        const f = arms.has('scratch') ? await trainArm(lab, seed, multi, episodes, config, fileTasks) : null;
        if (f) log(`seed ${seed}, ${multi.maxTurns} turns from scratch: ${JSON.stringify(f)}`);
        const o = arms.has('one') ? await trainArm(lab, seed, single, episodes, config, fileTasks) : null;
        if (o) log(`seed ${seed}, one turn: ${JSON.stringify(o)}`);
        rows.push({ seed, multiTurn: m, fromScratch: f, oneTurn: o });
      }
    } finally {
      await close();
    }
    const held = (arm: 'multiTurn' | 'fromScratch' | 'oneTurn') =>
      rows.map((r) => r[arm]?.successHeldOut ?? null);
    const gain = rows.map((r) => {
      const [m, o] = [r.multiTurn?.successHeldOut ?? null, r.oneTurn?.successHeldOut ?? null];
      return m === null || o === null ? null : m - o;
    });
    const of = (arm: 'multiTurn' | 'fromScratch' | 'oneTurn', key: Exclude<keyof Arm, 'file'>) =>
      meanSd(rows.map((r) => r[arm]?.[key] ?? null));
    const runFraction = of('multiTurn', 'runFraction');
    const reviseRate = of('multiTurn', 'reviseRate');
    const successMultiTurn = meanSd(held('multiTurn'));
    const successOneTurn = meanSd(held('oneTurn'));
    const apart = (a: ReturnType<typeof meanSd>, b: ReturnType<typeof meanSd>) =>
      a.mean !== null && b.mean !== null && a.mean - (a.sd ?? 0) > b.mean + (b.sd ?? 0);
    return {
      'tooluse.seeds': seeds,
      'tooluse.limit': samples ? { samples } : { seconds },
      'tooluse.arms': ARMS.filter((a) => arms.has(a)),
      'tooluse.turns': multi.maxTurns,
      'tooluse.rows': rows,
      'tooluse.successMultiTurn': successMultiTurn,
      'tooluse.successOneTurn': successOneTurn,
      'tooluse.gain': meanSd(gain),
      'tooluse.runFraction': runFraction,
      'tooluse.reviseRate': reviseRate,
      'tooluse.copyRate': of('multiTurn', 'copyRate'),
      'tooluse.successForcedOneTurn': of('multiTurn', 'successForcedOneTurn'),
      'tooluse.solvedWithRun': of('multiTurn', 'solvedWithRun'),
      'tooluse.meanTurns': of('multiTurn', 'meanTurns'),
      'tooluse.successTrainMultiTurn': of('multiTurn', 'successTrain'),
      'tooluse.successTrainOneTurn': of('oneTurn', 'successTrain'),
      'tooluse.fromScratch': {
        successHeldOut: meanSd(held('fromScratch')),
        successTrain: of('fromScratch', 'successTrain'),
        reviseRate: of('fromScratch', 'reviseRate'),
        copyRate: of('fromScratch', 'copyRate'),
        runFraction: of('fromScratch', 'runFraction'),
      },
      ...(file
        ? fileSummary(
            file,
            rows.map((r) => ({
              multiTurn: r.multiTurn?.file ?? fileFigures([]),
              fromScratch: r.fromScratch?.file ?? fileFigures([]),
              oneTurn: r.oneTurn?.file ?? fileFigures([]),
            })),
          )
        : {}),
      // The goal: the turn budget ≥ one turn + 0.2 held-out with ±1 sd apart, revising ≥ 0.5 (with
      // the automatic first run on, the revise rate and the gain carry the claim, not the run share).
      'tooluse.goalMet':
        successMultiTurn.mean !== null &&
        successOneTurn.mean !== null &&
        reviseRate.mean !== null &&
        successMultiTurn.mean >= successOneTurn.mean + 0.2 &&
        apart(successMultiTurn, successOneTurn) &&
        reviseRate.mean >= 0.5,
    };
  },
};

export default scenario;
