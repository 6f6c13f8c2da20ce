/**
 * The `learn` bench's training, in-process in node (no browser, no workers, no IndexedDB), for
 * quick comparisons of model variants. The real controller (`Pipeline`, η = 0 by default: rollout
 * and training alternate), the real job source (`CodeJobSource`: curriculum on easy only,
 * candidates, hindsight relabelling and posed tasks), the real rollout engine (`RolloutEngine`
 * over a cached QuickJS sandbox, 1 worker × 2 slots × group 4 = 8 rows, temperature 1,
 * interrupt every token) and the real trainer (`PolicyTrainer`: decoupled PPO, Adam 3e-3 halving
 * every 600 versions down to a tenth, one update per batch). Only the transport (Comlink,
 * BroadcastChannel, the store) is left out.
 *
 *   npx tsx e2e/bench/learn-node.ts [--seconds 300] [--seed 1] [--evalEvery 25]
 *     [--backend auto|wasm|cpu] [--eta 0] [--workers 1] [--maxVersions N] [--taskSeed 1]
 *     [--level easy|medium|hard]   the level trained and evaluated (the learn bench's: easy)
 *     [--kind examples|tooluse]    the built-in tasks' kind (DESIGN §3.1; tooluse: its env)
 *     [--turns N]                  turns per episode, in training and evaluation (default: the kind's;
 *                                  1: a submit, no `<run>`)
 *     [--saveWeights FILE] [--loadWeights FILE]   the parameters at the end; a warm start from them
 *     [--startFrom FILE]           a warm start from a checkpoint file (a built-in base: src/lib/policy/bases/)
 *     [--mix examples]             train on the examples kind's training tasks too
 *     [--hindsight on|off]         relabelling (default: the kind's; `on` takes DEFAULT_HINDSIGHT)
 *     [--losses 1]                 print every version's losses (to compare two builds)
 *     [--set group.field=value]... any run config field (`config/run-config.ts`), after the flags
 *                                  above: `--set learner.clipEps=0.1 --set policy.model.dModel=32`
 *   GATE_BIAS=2                   the copy head's gate bias at the start (with policy.model.pointerDim)
 *
 * `--seconds` is training time: greedy evaluations pause the run and are not counted (the page
 * evaluates in a worker of its own, beside the run). Evaluations: every `evalEvery` versions and
 * at the end, greedy (argmax) play once per task on the easy training, held-out and generalisation
 * tasks of the built-in suite (`builtInTasks(kind, taskSeed, task.split)`; the page always uses seed 1;
 * at most 512 training tasks, as `runEvaluationTasks` samples them), as the
 * page's evaluator does (CachedPolicyAgent, rows 32, sampler seed 1, the kind's env config).
 */
import * as tf from '@tensorflow/tfjs';
import { readFileSync, writeFileSync } from 'node:fs';
import { oneTurn, summarizeEpisode, toolUseFigures } from '../../src/lib/env/evaluate.ts';
import type { Episode } from '../../src/lib/env/episode.ts';
import {
  LEVELS,
  TASK_KINDS,
  type Level,
  type Task,
  type TaskKind,
  type TaskSuite,
} from '../../src/lib/env/suite.ts';
import { FAMILIES, PROCEDURAL_FAMILIES, suiteTask } from '../../src/lib/env/families.ts';
import { HeldOutIndex, PROBE_INPUTS } from '../../src/lib/env/decontaminate.ts';
import { builtInTasks, generalisationOf } from '../../src/lib/env/task-kinds.ts';
import { defaultRunConfig, withTaskKind, type RunConfig } from '../../src/lib/config/run-config.ts';
import { assemblePipeline } from '../../src/lib/run/pipeline.ts';
import { evaluationSample, runHeldOutTasks } from '../../src/lib/pipeline/run-tasks.ts';
import { runTrainingTasks } from '../../src/lib/pipeline/training-tasks.ts';
import type { PipelineTrainerPort, RolloutPort, StepReport } from '../../src/lib/pipeline/types.ts';
import type { Weights } from '../../src/lib/policy/model.ts';
import { PolicyTrainer, type StepMetrics } from '../../src/lib/rl/trainer.ts';
import { DEFAULT_HINDSIGHT, relabelledKey } from '../../src/lib/rl/hindsight.ts';
import type { TokenBatch } from '../../src/lib/rl/batch.ts';
import { ppoUpdate } from '../../src/lib/rl/update.ts';
import { packOptimizer, paramsFromCheckpoint } from '../../src/lib/policy/weights.ts';
import { checkpointFromText } from '../../src/lib/policy/checkpoint-file.ts';
import { CachedSandbox } from '../../src/lib/sandbox/cache.ts';
import { createNodeQuickJS } from '../../src/lib/sandbox/quickjs-node.ts';
import { flag, greedyEpisodes, nodeEngines, useBackend, withSets } from './node-kit.ts';
import { scheduledRate, trainerConfigOf } from '../../src/lib/rl/learner-config.ts';

// ---- flags -------------------------------------------------------------------------------
const SECONDS = Number(flag('seconds', '300'));
const SEED = Number(flag('seed', '1'));
const EVAL_EVERY = Number(flag('evalEvery', '25'));
const BACKEND = flag('backend', 'auto');
const ETA = flag('eta', '0') === 'inf' ? Infinity : Number(flag('eta', '0'));
const WORKERS = Number(flag('workers', '1'));
const MAX_VERSIONS = Number(flag('maxVersions', 'Infinity'));
const TASK_SEED = Number(flag('taskSeed', '1'));
const LEVEL = flag('level', 'easy');
/** `--losses`: one line per version with the step's losses, to compare two builds step by step. */
const LOSSES = flag('losses', '') !== '';
if (!(LEVELS as readonly string[]).includes(LEVEL))
  throw new Error(`--level takes ${LEVELS.join(', ')}, not ${LEVEL}`);
const KIND = TASK_KINDS.find((k) => k === flag('kind', 'examples'));
if (!KIND) throw new Error(`--kind takes ${TASK_KINDS.join(', ')}, not ${flag('kind', '')}`);
const kind: TaskKind = KIND;

// The learn bench's settings: the page's defaults, level easy, seed 1 (η and workers: see below).
const kinded = withTaskKind(defaultRunConfig(2), kind);
const TURNS = flag('turns', '');
const HINDSIGHT = flag('hindsight', '');
const settings: RunConfig = withSets({
  ...kinded,
  seed: SEED,
  pipeline: { ...kinded.pipeline, eta: ETA },
  // One turn is a submit (no `<run>`): the tool-use bench's one-turn arm.
  ...(TURNS
    ? { env: Number(TURNS) === 1 ? oneTurn(kinded.env) : { ...kinded.env, maxTurns: Number(TURNS) } }
    : {}),
  ...(HINDSIGHT
    ? { hindsight: HINDSIGHT === 'on' ? DEFAULT_HINDSIGHT : { ...kinded.hindsight, samplesPerBatch: 0 } }
    : {}),
});
const learner = settings.learner;
const modelArgs = settings.policy.model;

// ---- backend -----------------------------------------------------------------------------
// wasm by default: about 75 episodes/s here against about 1.3 on 'cpu' (measured in this script).
try {
  await useBackend(BACKEND === 'auto' ? 'wasm' : (BACKEND as 'wasm' | 'cpu'));
} catch (err) {
  if (BACKEND !== 'auto') throw err;
  console.log(`# wasm backend failed (${err instanceof Error ? err.message : String(err)}); using cpu`);
  await useBackend('cpu');
}

// ---- tasks -------------------------------------------------------------------------------
const builtIn = builtInTasks(kind, TASK_SEED, settings.task.split);
// `--mix examples`: the examples kind's training tasks train beside the run's own (as a suite of
// the run's own would hold them); evaluations stay on the run's kind.
const MIX = flag('mix', '');
if (MIX && MIX !== 'examples') throw new Error(`--mix takes examples, not ${MIX}`);
// The two kinds split their tasks apart: an examples task whose function the run holds out
// (held-out or generalisation, at every input 0–13) is left out.
const heldOutIndex = new HeldOutIndex(runHeldOutTasks(builtIn));
const functionOf = (program: string) => {
  for (const f of [...FAMILIES, ...PROCEDURAL_FAMILIES])
    for (const p of f.params) if (f.source(p) === program) return (x: number) => f.apply(p, x);
  throw new Error(`no family writes ${program}`);
};
const mixed: TaskSuite | null = MIX
  ? {
      name: `${kind} and examples`,
      tasks: [
        ...builtIn.filter((t) => !t.heldOut),
        ...builtInTasks('examples', TASK_SEED, settings.task.split).filter(
          (t) =>
            !t.heldOut &&
            heldOutIndex.match((x) => (PROBE_INPUTS.includes(x) ? functionOf(t.program)(x) : undefined)) ===
              null,
        ),
      ].map(suiteTask),
    }
  : null;
const trainTasks = runTrainingTasks(
  { suite: mixed, level: LEVEL as Level, wide: settings.task.wide },
  builtIn,
);
const ofLevel = builtIn.filter((t) => t.level === LEVEL);
const evalTrain = evaluationSample(ofLevel.filter((t) => !t.heldOut));
const evalHeld = ofLevel.filter((t) => t.heldOut);
const evalGeneral = generalisationOf(builtIn).filter((t) => t.level === LEVEL);
const plain = ({ id, level, kind, examples, tests, hidden }: Task): Task =>
  kind ? { id, level, kind, examples, tests, hidden } : { id, level, examples, hidden };
/** The hindsight pool's key of the relabelled task a correct program for `t` makes. */
const relabelKey = (t: Task) =>
  relabelledKey(
    t.level,
    [...t.examples, ...t.hidden].map((e) => e.output),
  );

// ---- the pieces --------------------------------------------------------------------------
const rolloutSandbox = new CachedSandbox(await createNodeQuickJS());
const evalSandbox = new CachedSandbox(await createNodeQuickJS());
const trainer = new PolicyTrainer(modelArgs, trainerConfigOf(learner, settings.seed));
if (process.env.GATE_BIAS) {
  const bias = tf.tensor1d([Number(process.env.GATE_BIAS)]);
  trainer.params.get('ptr.gate.b')?.assign(bias);
  bias.dispose();
}

// `--loadWeights FILE`: start from the parameters a run saved with `--saveWeights FILE` (a warm
// start; Adam starts afresh).
const LOAD = flag('loadWeights', '');
const SAVE = flag('saveWeights', '');
const START_FROM = flag('startFrom', '');
if (START_FROM) {
  const ckpt = checkpointFromText(readFileSync(START_FROM, 'utf8'), START_FROM);
  if (JSON.stringify(ckpt.model) !== JSON.stringify(modelArgs))
    throw new Error(
      `${START_FROM} holds a model ${JSON.stringify(ckpt.model)}, the run's is ${JSON.stringify(modelArgs)}`,
    );
  const loaded = paramsFromCheckpoint(ckpt);
  for (const [name, v] of trainer.params) v.assign(loaded.get(name) as tf.Variable);
  tf.dispose([...loaded.values()]);
  console.log(`# started from ${START_FROM} (step ${ckpt.step})`);
}
if (LOAD) {
  const saved = JSON.parse(readFileSync(LOAD, 'utf8')) as Record<string, number[]>;
  for (const [name, v] of trainer.params) {
    const data = saved[name];
    if (!data || data.length !== v.size) throw new Error(`${LOAD} has no ${name} of ${v.size} values`);
    const t = tf.tensor(data, v.shape);
    v.assign(t);
    t.dispose();
  }
  console.log(`# started from ${LOAD}`);
}

/** A copy of the trainer's weights for the rollout engine (shares data until the trainer's next step). */
const snapshot = (): Weights => new Map([...trainer.params].map(([k, v]) => [k, tf.clone(v)]));
const release = (w: Weights) => tf.dispose([...w.values()]);

const rows = settings.pipeline.slotsPerWorker * learner.groupSize;
const engines = nodeEngines(
  WORKERS,
  rolloutSandbox,
  {
    args: modelArgs,
    rows: rows,
    interruptEveryTokens: settings.pipeline.interruptEveryTokens,
    temperature: settings.policy.temperature,
    seed: settings.seed,
  },
  release,
);
const publish = (v: number) => {
  for (const e of engines) e.offer(v, snapshot(), performance.now());
};

// ---- clock: training time excludes evaluations ---------------------------------------------
const t0 = performance.now();
let evalMs = 0;
const trainSeconds = () => (performance.now() - t0 - evalMs) / 1000;

// ---- greedy evaluation (as the page's evaluator) ----------------------------------------------
interface EvalResult {
  version: number;
  seconds: number;
  episodes: number;
  trainedEpisodes: number;
  successTrain: number;
  successHeldOut: number;
  successGeneralisation: number;
  /** Mean `<run>` turns of the greedy training-task episodes. */
  meanRuns: number;
  /** Of the held-out episodes: mean turns, and the fraction of the solved ones that ran a program. */
  meanTurnsHeldOut: number;
  runFractionHeldOut: number;
  /** Tool-use kind, held-out: the same policy forced to one turn (a submit), and the revising figures. */
  successHeldOutOneTurn?: number;
  reviseRate?: number | null;
  copyRate?: number | null;
  ownRunFraction?: number | null;
  programs: string;
}
const evals: EvalResult[] = [];
const greedy = (tasks: readonly Task[]): Promise<Episode[]> =>
  greedyEpisodes(tasks, trainer.params, modelArgs, evalSandbox, settings.env);
const short = (id: string) =>
  id
    .replace(/^constant:/, 'c:')
    .replace(/^x\+b:/, '+')
    .replace(/^a\*x:/, '*');
async function evaluate(version: number): Promise<EvalResult> {
  const seconds = trainSeconds();
  const e0 = performance.now();
  const tr = await greedy(evalTrain.map(plain));
  const ho = await greedy(evalHeld.map(plain));
  const ge = await greedy(evalGeneral.map(plain));
  const rate = (eps: Episode[]) => eps.filter((e) => e.solved).length / Math.max(1, eps.length);
  const shown = (e: Episode) =>
    `${short(e.task.id)}${e.solved ? '✓' : '✗'}${e.turns.map((t) => t.program || '∅').join('|')}`;
  // The held-out tasks' programs, then the training tasks it fails.
  const failed = tr.filter((e) => !e.solved);
  // Which held-out tasks the hindsight pool holds as a relabelled task (a program the policy
  // wrote computes it), and how often they occur among its recent programs.
  const pool = source.hindsight.snapshot();
  const counts = new Map<string, number>();
  for (const k of pool.recent) counts.set(k, (counts.get(k) ?? 0) + 1);
  const inPool = evalHeld
    .map((t) => [short(t.id), counts.get(relabelKey(t)) ?? 0] as const)
    .filter(([, n]) => n > 0);
  const programs = `${ho.map(shown).join(' ')}${failed.length ? `  · train ${failed.map(shown).join(' ')}` : ''}`;
  console.log(
    `        pool ${pool.best.length} distinct / ${pool.recent.length} (${pool.recent.filter((k) => k.includes('|')).length} with runs); held-out in it: ${inPool.map(([id, n]) => `${id}×${n}`).join(' ') || 'none'}`,
  );
  const tool =
    kind === 'tooluse' ? toolUseFigures(ho.map((e) => summarizeEpisode(e, { heldOut: true }))) : undefined;
  const heldOne =
    kind === 'tooluse'
      ? await greedyEpisodes(
          evalHeld.map(plain),
          trainer.params,
          modelArgs,
          evalSandbox,
          oneTurn(settings.env),
        )
      : null;
  const r: EvalResult = {
    version,
    seconds,
    episodes: pipeline.counters.generatedEpisodes,
    trainedEpisodes: pipeline.counters.trainedEpisodes,
    successTrain: rate(tr),
    successHeldOut: rate(ho),
    successGeneralisation: rate(ge),
    meanRuns: tr.reduce((n, e) => n + e.runs, 0) / Math.max(1, tr.length),
    meanTurnsHeldOut: ho.reduce((n, e) => n + e.turns.length, 0) / Math.max(1, ho.length),
    runFractionHeldOut:
      ho.filter((e) => e.solved && e.runs > 0).length / Math.max(1, ho.filter((e) => e.solved).length),
    ...(heldOne ? { successHeldOutOneTurn: rate(heldOne) } : {}),
    ...(tool
      ? { reviseRate: tool.reviseRate, copyRate: tool.copyRate, ownRunFraction: tool.runFraction }
      : {}),
    programs,
  };
  evals.push(r);
  evalMs += performance.now() - e0;
  const eps = r.episodes / Math.max(1e-3, seconds);
  console.log(
    `${seconds.toFixed(0).padStart(4)} s  v${String(version).padEnd(4)} ${String(r.episodes).padStart(6)} ep (${eps.toFixed(1)}/s)  ` +
      `train ${r.successTrain.toFixed(2)}  held ${r.successHeldOut.toFixed(2)}  general ${r.successGeneralisation.toFixed(2)}  runs ${r.meanRuns.toFixed(2)}  held turns ${r.meanTurnsHeldOut.toFixed(2)} ran ${r.runFractionHeldOut.toFixed(2)}${tool ? `  one-turn ${r.successHeldOutOneTurn?.toFixed(2)} revise ${tool.reviseRate?.toFixed(2) ?? '–'} copy ${tool.copyRate?.toFixed(2) ?? '–'} own runs ${tool.runFraction?.toFixed(2) ?? '–'}` : ''}  [eval ${((performance.now() - e0) / 1000).toFixed(1)} s, ${tf.memory().numTensors} tensors]  ${programs}`,
  );
  return r;
}

// ---- the pipeline --------------------------------------------------------------------------
let lastMetrics: StepMetrics | null = null;
/** Training and publishing (evaluations left out), ms over the run. */
let trainMs = 0;
/**
 * The update strategy's figures over the run: ppoUpdate's wall ms, its steps' ms, tensors trained,
 * and the batch positions (rows × length) the steps went over.
 */
const strategyFigures = { updateMs: 0, stepMs: 0, steps: 0, tensorsTrained: 0, positions: 0 };
const trainerPort: PipelineTrainerPort = {
  async trainAndPublish(batch: TokenBatch, info) {
    const startedAt = performance.now();
    const metrics = await ppoUpdate(trainer, batch, {
      updates: learner.updatesPerBatch,
      rate: scheduledRate(learner, info.fromVersion),
      version: info.fromVersion,
      performance: info.performance,
      onStep: (m) => {
        strategyFigures.stepMs += m.ms;
        strategyFigures.steps += 1;
        strategyFigures.tensorsTrained += m.tensorsTrained ?? trainer.params.size;
        strategyFigures.positions += batch.batch * batch.length;
      },
    });
    strategyFigures.updateMs += performance.now() - startedAt;
    lastMetrics = metrics;
    const version = info.fromVersion + 1;
    if (LOSSES)
      console.log(
        `loss v${version} ${metrics.loss} pg ${metrics.pgLoss} value ${metrics.valueLoss} entropy ${metrics.entropy} gradNorm ${metrics.gradNorm}`,
      );
    publish(version);
    trainMs += performance.now() - startedAt;
    // With η = 0 the rollouts are idle here: the evaluation pauses the whole run.
    if (EVAL_EVERY > 0 && version % EVAL_EVERY === 0) await evaluate(version);
    return { version, metrics, startedAt, publishedAt: performance.now() };
  },
};

// The pipeline as the page assembles it; the rollouts join after the first evaluation.
const { pipeline, source } = assemblePipeline(
  {
    runId: 'node-learn',
    settings: { ...settings, task: { ...settings.task, suite: mixed, level: LEVEL as Level } },
    suite: builtIn,
  },
  {
    trainer: trainerPort,
    hooks: {
      onStep: (r: StepReport) => {
        if (trainSeconds() >= SECONDS || r.version >= MAX_VERSIONS) finish();
      },
      onError: (m) => fail(new Error(m)),
    },
  },
);

console.log(
  `# backend ${tf.getBackend()}, ${trainer.parameterCount} parameters, model ${JSON.stringify(modelArgs)}\n` +
    `# η ${ETA}, workers ${WORKERS} × ${settings.pipeline.slotsPerWorker} slots × group ${learner.groupSize}, batch ${learner.tasksPerBatch} groups + ${settings.hindsight.samplesPerBatch} relabelled, ` +
    `lr ${learner.learningRate} (half-life ${learner.lrHalfLife}), ${learner.estimator}, ${learner.loss}, updates ${learner.updatesPerBatch}, seed ${settings.seed}, ` +
    `tasks (${kind}${mixed ? ' and examples' : ''}): ${trainTasks.length} ${LEVEL} training, ${evalHeld.length} ${LEVEL} held-out, ${evalGeneral.length} generalisation (suite seed ${TASK_SEED}); ${SECONDS} s, eval every ${EVAL_EVERY}`,
);

let finish: () => void = () => undefined;
let fail: (err: Error) => void = () => undefined;
const done = new Promise<void>((resolve, reject) => {
  finish = resolve;
  fail = reject;
});

publish(0);
await evaluate(0);
engines.forEach((e, i) => {
  const port: RolloutPort = { play: (job) => e.play(job), abort: async (id, keep) => e.abort(id, keep) };
  pipeline.addWorker(`rollout-${i}`, port, `rollout-${i}` as const);
});
pipeline.start();
try {
  await done;
} finally {
  pipeline.stop();
  await pipeline.trainerIdle();
}
const seconds = trainSeconds();
const last =
  evals.at(-1)?.version === pipeline.version
    ? (evals.at(-1) as EvalResult)
    : await evaluate(pipeline.version);
for (const e of engines) e.dispose();

const best = evals.reduce((b, e) => (e.successHeldOut > b.successHeldOut ? e : b), evals[0] as EvalResult);
const t90 = evals.find((e) => e.successTrain >= 0.9);
const goal = evals.find((e) => e.successTrain >= 0.9 && e.successHeldOut >= 0.7);
const at = (e: EvalResult | undefined) =>
  e ? { seconds: Math.round(e.seconds), version: e.version, episodes: e.episodes } : null;
const c = pipeline.counters;
// What a stored version of this run holds: the policy (every parameter, or LoRA's adapters) and Adam's state.
const storedPolicy = await trainer.exportPolicy();
const storedAdam = await packOptimizer(trainer.optimizer);
const perStep = (x: number) => Number((x / Math.max(1, strategyFigures.steps)).toFixed(1));
console.log(
  JSON.stringify({
    backend: tf.getBackend(),
    model: modelArgs,
    parameters: trainer.parameterCount,
    seed: settings.seed,
    eta: settings.pipeline.eta,
    seconds: Math.round(seconds),
    evalSeconds: Math.round(evalMs / 1000),
    versions: pipeline.version,
    episodes: c.generatedEpisodes,
    trainedEpisodes: c.trainedEpisodes,
    episodesPerSec: Number((c.generatedEpisodes / seconds).toFixed(2)),
    preemptions: c.preemptions,
    resumed: c.resumed,
    keptTokens: c.keptTokens,
    requeues: c.requeues,
    interrupts: c.interrupts,
    // Ms a job waited in the queue before it started, mean over every start.
    meanWaitMs: Number((c.queueWaitMs / Math.max(1, c.startedGroups)).toFixed(1)),
    budgetWaits: c.budgetWaits,
    overruns: c.overruns,
    startedGroups: c.startedGroups,
    // Of the training time: rollout and the rest (training time − train) and train + publish, ms per version.
    msPerVersion: {
      rollout: Math.round((seconds * 1000 - trainMs) / Math.max(1, c.trainSteps)),
      train: Math.round(trainMs / Math.max(1, c.trainSteps)),
    },
    hindsight: {
      relabelled: source.hindsight.added,
      distinct: source.hindsight.distinct,
      posed: source.posed,
      decontaminated: source.hindsight.decontaminated,
    },
    lastEntropy: lastMetrics ? Number((lastMetrics as StepMetrics).entropy.toFixed(3)) : null,
    finalTrain: last.successTrain,
    finalHeldOut: last.successHeldOut,
    finalGeneralisation: last.successGeneralisation,
    kind,
    finalMeanRuns: last.meanRuns,
    turns: settings.env.maxTurns,
    finalMeanTurnsHeldOut: last.meanTurnsHeldOut,
    finalRunFractionHeldOut: last.runFractionHeldOut,
    ...(kind === 'tooluse'
      ? {
          finalToolUse: {
            successOneTurn: last.successHeldOutOneTurn,
            reviseRate: last.reviseRate,
            copyRate: last.copyRate,
            ownRunFraction: last.ownRunFraction,
          },
        }
      : {}),
    bestHeldOut: best ? { value: best.successHeldOut, ...at(best) } : null,
    train90: at(t90),
    goal: at(goal),
    strategy: {
      name: learner.strategy,
      // ppoUpdate's wall ms per version (the strategy's planning and importance included), and per optimiser step.
      updateMs: Number((strategyFigures.updateMs / Math.max(1, c.trainSteps)).toFixed(1)),
      stepMs: perStep(strategyFigures.stepMs),
      // A step's ms per 1 000 batch positions: its cost apart from how many rows and tokens the run's batches had.
      msPerKPositions: Number(
        ((strategyFigures.stepMs / Math.max(1, strategyFigures.positions)) * 1000).toFixed(2),
      ),
      tensorsTrained: perStep(strategyFigures.tensorsTrained),
      tensors: (trainer.adapters ?? trainer.params).size,
      bytesPerVersion: {
        policy: storedPolicy.params.data.byteLength,
        optimizer: storedAdam.data.byteLength,
      },
      finalRate: lastMetrics ? (lastMetrics as StepMetrics).learningRate : null,
      switches: trainer.strategy.switches,
    },
  }),
);
if (SAVE) {
  const out: Record<string, number[]> = {};
  for (const [name, v] of trainer.params) out[name] = Array.from(await v.data());
  writeFileSync(SAVE, JSON.stringify(out));
}
rolloutSandbox.dispose?.();
evalSandbox.dispose?.();
process.exit(0);
