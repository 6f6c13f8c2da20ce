/**
 * AReaL's staleness experiment (its Table 3: standard PPO against decoupled PPO as the staleness
 * bound η grows), in node: the learn bench's training (`learn-node.ts`: the real controller, job
 * source, rollout engine and `ppoUpdate`) with the staleness made explicit. With `--lag fixed`
 * (the default) every batch is played with the weights of version max(0, v − η) while the trainer
 * is at version v: the controller runs synchronously (its η = 0, rollout and training alternate)
 * and each published version hands the rollout engine the weights η versions older, so that every
 * sample is exactly η versions stale, as in AReaL at its bound, whatever the timing (the page's
 * `RunConfig.playLag`, the same `LaggedVersions`). `--lag async`
 * runs the pipeline asynchronously with the bound η instead (staleness is then whatever the
 * timing reaches; `meanStaleness` says how much).
 *
 *   npx tsx e2e/bench/staleness-node.ts --eta 4 --loss ppo --seed 1 [--maxVersions 150]
 *     [--lag fixed|async] [--workers 1] [--level easy] [--evalEvery 25] [--seconds 600]
 *     [--updates 1] [--lr 0.003] [--relabelled 32] [--maxGradNorm 0.5]
 *     [--save FILE] [--init FILE] [--stopAt 0.5]
 *   --save writes the final weights; --init starts from such a file (fresh Adam, version 0);
 *   --stopAt ends the run at the first evaluation whose training success reaches it (a warm-up)
 *   the four flags above set learner.updatesPerBatch, learner.learningRate,
 *   hindsight.samplesPerBatch and learner.maxGradNorm; `--set group.field=value` (any run config
 *   field, `config/run-config.ts`) goes over them
 *   npx tsx e2e/bench/staleness-node.ts --grid [--etas 0,1,2,4,8] [--seeds 1,2,3] [...one run's flags]
 *     runs each η × {ppo, decoupled} × seed in a child process, one at a time, and prints the
 *     summary (`summariseSweep`) as the last line.
 *
 * The last line is one JSON object. Success is greedy (argmax) play once per task of the level's
 * training and held-out tasks, as the page's evaluator plays; `success*` is the mean of the
 * evaluations over the run's last quarter (greedy answers flip from one version to the next).
 */
import * as tf from '@tensorflow/tfjs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readFileSync, writeFileSync } from 'node:fs';
import { generateTasks } from '../../src/lib/env/families.ts';
import { LEVELS, type Level, type Task } from '../../src/lib/env/suite.ts';
import { defaultRunConfig, type RunConfig } from '../../src/lib/config/run-config.ts';
import type { PipelineTrainerPort, RolloutPort } from '../../src/lib/pipeline/types.ts';
import type { StepMetrics } from '../../src/lib/policy/metrics.ts';
import type { Weights } from '../../src/lib/policy/model.ts';
import { checkpointFromText, checkpointToText } from '../../src/lib/policy/checkpoint-file.ts';
import { paramsFromCheckpoint } from '../../src/lib/policy/weights.ts';
import { summariseSweep, type SweepRun } from '../../src/lib/run/sweep-summary.ts';
import { assemblePipeline } from '../../src/lib/run/pipeline.ts';
import { PolicyTrainer } from '../../src/lib/rl/trainer.ts';
import { ppoUpdate } from '../../src/lib/rl/update.ts';
import { CachedSandbox } from '../../src/lib/sandbox/cache.ts';
import { createNodeQuickJS } from '../../src/lib/sandbox/quickjs-node.ts';
import { LaggedVersions } from '../../src/lib/rollout/lagged-versions.ts';
import { flag, greedyEpisodes, nodeEngines, useBackend, withSets } from './node-kit.ts';
import { scheduledRate, trainerConfigOf } from '../../src/lib/rl/learner-config.ts';

// ---- flags -------------------------------------------------------------------------------
const argv = process.argv.slice(2);

if (argv.includes('--grid')) {
  await grid();
  process.exit(0);
}

const ETA = Number(flag('eta', '0'));
const LOSS = flag('loss', 'decoupled');
const SEED = Number(flag('seed', '1'));
const MAX_VERSIONS = Number(flag('maxVersions', '150'));
const SECONDS = Number(flag('seconds', '600'));
const EVAL_EVERY = Number(flag('evalEvery', '25'));
const LAG = flag('lag', 'fixed');
const WORKERS = Number(flag('workers', '1'));
const LEVEL = flag('level', 'easy');
if (!(LEVELS as readonly string[]).includes(LEVEL)) throw new Error(`--level takes ${LEVELS.join(', ')}`);
if (LOSS !== 'ppo' && LOSS !== 'decoupled') throw new Error('--loss takes ppo or decoupled');
if (LAG !== 'fixed' && LAG !== 'async') throw new Error('--lag takes fixed or async');
if (!(Number.isInteger(ETA) && ETA >= 0)) throw new Error('--eta takes a whole number');

/** A numeric flag, or undefined when it is not given. */
const numberFlag = (name: string): number | undefined => {
  const v = flag(name, '');
  if (v === '') return undefined;
  if (!Number.isFinite(Number(v))) throw new Error(`--${name} takes a number`);
  return Number(v);
};
const base = defaultRunConfig(2);
const relabelled = numberFlag('relabelled');
// The flags, then every `--set group.field=value` over them.
const settings: RunConfig = withSets({
  ...base,
  seed: SEED,
  learner: {
    ...base.learner,
    loss: LOSS,
    updatesPerBatch: numberFlag('updates') ?? base.learner.updatesPerBatch,
    learningRate: numberFlag('lr') ?? base.learner.learningRate,
    maxGradNorm: numberFlag('maxGradNorm') ?? base.learner.maxGradNorm,
  },
  hindsight: { ...base.hindsight, samplesPerBatch: relabelled ?? base.hindsight.samplesPerBatch },
  pipeline: { ...base.pipeline, eta: LAG === 'fixed' ? 0 : ETA, playLag: LAG === 'fixed' ? ETA : 0 },
  task: { ...base.task, suite: null, level: LEVEL as Level },
});
const code = settings.learner;
const modelArgs = settings.policy.model;
const INIT = flag('init', '');
const SAVE = flag('save', '');
const STOP_AT = numberFlag('stopAt');

// ---- backend: wasm, single-threaded, as the page's workers run it ------------------------------
await useBackend('wasm');

// ---- tasks and pieces --------------------------------------------------------------------
const builtIn = generateTasks(1);
const ofLevel = builtIn.filter((t) => t.level === LEVEL);
const plain = ({ id, level, examples, hidden }: Task): Task => ({ id, level, examples, hidden });
const evalTrain = ofLevel.filter((t) => !t.heldOut).map(plain);
const evalHeld = ofLevel.filter((t) => t.heldOut).map(plain);

const rolloutSandbox = new CachedSandbox(await createNodeQuickJS());
const evalSandbox = new CachedSandbox(await createNodeQuickJS());
/** The weights of a file `--save` wrote (the page's built-in bases are such files). */
function loadInit(file: string) {
  const ckpt = checkpointFromText(readFileSync(file, 'utf8'), file);
  if (JSON.stringify(ckpt.model) !== JSON.stringify(modelArgs))
    throw new Error(`${file} holds a model of ${JSON.stringify(ckpt.model)}, not the run's`);
  return paramsFromCheckpoint(ckpt);
}
const trainer = new PolicyTrainer(
  modelArgs,
  trainerConfigOf(code, settings.seed),
  INIT ? loadInit(INIT) : undefined,
);

const clone = (): Weights => new Map([...trainer.params].map(([k, v]) => [k, tf.clone(v)]));
const release = (w: Weights) => tf.dispose([...w.values()]);
/** Fixed lag: the weights of the versions played from, as a page worker holds them. */
const lagged = new LaggedVersions<Weights>(LAG === 'fixed' ? ETA : 0);

const engines = nodeEngines(
  LAG === 'fixed' ? 1 : WORKERS,
  rolloutSandbox,
  {
    args: modelArgs,
    rows: settings.pipeline.slotsPerWorker * code.groupSize,
    interruptEveryTokens: settings.pipeline.interruptEveryTokens,
    temperature: settings.policy.temperature,
    seed: settings.seed,
  },
  release,
);
/**
 * Version `v` is out: the engines get its weights (async) or, as `RunConfig.playLag` has a page
 * worker do, those of version max(0, v − η) under v's label, their tokens stamped with the version played (fixed).
 */
function publish(v: number): void {
  if (LAG === 'async') {
    for (const e of engines) e.offer(v, clone(), performance.now());
    return;
  }
  const played = lagged.push(v, clone(), release);
  const copy: Weights = new Map([...played.item].map(([k, t]) => [k, tf.clone(t)]));
  for (const e of engines) e.offer(v, copy, performance.now(), modelArgs, played.version);
}

// ---- greedy evaluation -------------------------------------------------------------------
async function greedy(tasks: readonly Task[]): Promise<number> {
  const out = await greedyEpisodes(tasks, trainer.params, modelArgs, evalSandbox);
  return out.filter((e) => e.solved).length / Math.max(1, out.length);
}
const evals: { version: number; train: number; heldOut: number }[] = [];
async function evaluate(version: number): Promise<void> {
  const e = { version, train: await greedy(evalTrain), heldOut: await greedy(evalHeld) };
  evals.push(e);
  console.log(`v${version}  train ${e.train.toFixed(2)}  held ${e.heldOut.toFixed(2)}`);
}

// ---- the run -----------------------------------------------------------------------------
const firstEpoch: StepMetrics[] = [];
const lastEpoch: StepMetrics[] = [];
const t0 = performance.now();
const trainerPort: PipelineTrainerPort = {
  async trainAndPublish(batch, info) {
    const startedAt = performance.now();
    const metrics = await ppoUpdate(trainer, batch, {
      updates: code.updatesPerBatch,
      rate: scheduledRate(code, info.fromVersion),
      onStep: (m, epoch) => epoch === 0 && firstEpoch.push(m),
    });
    lastEpoch.push(metrics);
    const version = info.fromVersion + 1;
    publish(version);
    if (EVAL_EVERY > 0 && version % EVAL_EVERY === 0) {
      await evaluate(version);
      if (STOP_AT !== undefined && (evals.at(-1)?.train ?? 0) >= STOP_AT) finish();
    }
    return { version, metrics, startedAt, publishedAt: performance.now() };
  },
};
let finish: () => void = () => undefined;
let fail: (err: Error) => void = () => undefined;
const done = new Promise<void>((resolve, reject) => {
  finish = resolve;
  fail = reject;
});
const { pipeline, source } = assemblePipeline(
  {
    runId: 'node-staleness',
    settings,
    suite: builtIn,
  },
  {
    trainer: trainerPort,
    hooks: {
      onStep: (r) => {
        if (r.version >= MAX_VERSIONS || (performance.now() - t0) / 1000 >= SECONDS) finish();
      },
      onError: (m) => fail(new Error(m)),
    },
  },
);
publish(0);
engines.forEach((e, i) => {
  const port: RolloutPort = { play: (job) => e.play(job), abort: async (id) => e.abort(id) };
  pipeline.addWorker(`rollout-${i}`, port, `rollout-${i}` as const);
});
console.log(
  `# η ${ETA} (${LAG}), ${LOSS}, seed ${SEED}, ${MAX_VERSIONS} versions, updates ${code.updatesPerBatch}, lr ${code.learningRate}, ` +
    `clip ${trainer.config.clipEps}, grad norm ${trainer.config.maxGradNorm}, batch ${code.tasksPerBatch}×${code.groupSize} + ${settings.hindsight.samplesPerBatch} relabelled, ${LEVEL}`,
);
pipeline.start();
try {
  await done;
} finally {
  pipeline.stop();
  await pipeline.trainerIdle();
}
if (evals.at(-1)?.version !== pipeline.version) await evaluate(pipeline.version);
if (SAVE) writeFileSync(SAVE, checkpointToText(await trainer.exportPolicy(true)));
for (const e of engines) e.dispose();
lagged.clear(release);

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const r3 = (x: number) => Math.round(x * 1000) / 1000;
const hist = pipeline.counters.stalenessHistogram;
const late = evals.filter((e) => e.version >= 0.75 * pipeline.version);
const run: SweepRun = {
  eta: ETA,
  loss: LOSS,
  seed: SEED,
  versions: pipeline.version,
  trainedEpisodes: pipeline.counters.trainedEpisodes,
  seconds: Math.round((performance.now() - t0) / 1000),
  meanStaleness: r3(mean(Object.entries(hist).flatMap(([s, n]) => Array<number>(n).fill(Number(s))))),
  successTrain: r3(mean(late.map((e) => e.train))),
  successHeldOut: r3(mean(late.map((e) => e.heldOut))),
  finalTrain: r3(evals.at(-1)?.train ?? NaN),
  clipFracFirst: r3(mean(firstEpoch.map((m) => m.clipFrac))),
  clipFracLast: r3(mean(lastEpoch.map((m) => m.clipFrac))),
  lagKl: r3(mean(firstEpoch.map((m) => (LOSS === 'ppo' ? m.approxKl : m.lagKl)))),
  maskedFrac: r3(mean(firstEpoch.map((m) => m.maskedFrac))),
  entropy: r3(lastEpoch.at(-1)?.entropy ?? NaN),
  // Training success at each evaluation, in order.
  curve: evals.map((e) => e.train.toFixed(2)).join(' '),
};
console.log(
  JSON.stringify({
    ...run,
    lag: LAG,
    relabelled: source.hindsight.added,
    updates: code.updatesPerBatch,
    lr: code.learningRate,
    relabelledPerBatch: settings.hindsight.samplesPerBatch,
    maxGradNorm: trainer.config.maxGradNorm,
    // The gradient's global norm before the clip, on each batch's first step: mean, median, max.
    gradNorm: r3(mean(firstEpoch.map((m) => m.gradNorm))),
    gradNormMedian: r3(
      firstEpoch.map((m) => m.gradNorm).sort((a, b) => a - b)[firstEpoch.length >> 1] ?? NaN,
    ),
    gradNormMax: r3(Math.max(...firstEpoch.map((m) => m.gradNorm))),
    level: LEVEL,
    init: INIT || undefined,
  }),
);
rolloutSandbox.dispose?.();
evalSandbox.dispose?.();
process.exit(0);

// ---- the grid ----------------------------------------------------------------------------
async function grid(): Promise<void> {
  const etas = flag('etas', '0,1,2,4,8').split(',').map(Number);
  const seeds = flag('seeds', '1,2,3').split(',').map(Number);
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--grid') continue;
    if (['--etas', '--seeds'].includes(a)) i++;
    else if (!a.startsWith('--etas=') && !a.startsWith('--seeds=')) rest.push(a);
  }
  const self = fileURLToPath(import.meta.url);
  const runs: SweepRun[] = [];
  for (const eta of etas)
    for (const loss of ['ppo', 'decoupled'])
      for (const seed of seeds) {
        // `{seed}` in a flag's value (e.g. `--init warm-{seed}.json`) names this run's seed.
        const own = rest.map((a) => a.replaceAll('{seed}', String(seed)));
        const args = [...own, '--eta', String(eta), '--loss', loss, '--seed', String(seed)];
        const out = spawnSync('npx', ['tsx', self, ...args], { encoding: 'utf8', env: process.env });
        const last = out.stdout.trim().split('\n').at(-1) ?? '';
        if (out.status !== 0 || !last.startsWith('{'))
          throw new Error(`η ${eta} ${loss} seed ${seed} failed: ${out.stderr.slice(-2000)}`);
        const run = JSON.parse(last) as SweepRun;
        runs.push(run);
        console.log(JSON.stringify(run));
      }
  console.log(JSON.stringify(summariseSweep(runs)));
}
