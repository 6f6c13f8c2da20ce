/**
 * The revise warm start in node (DESIGN §5): supervised training on sequences of a tool-use
 * episode — a wrong first program run, its report, the right program submitted — then greedy
 * play of the held-out and training tool-use tasks, as the page's evaluator plays them, with the
 * automatic first run on.
 *
 *   npx tsx e2e/bench/revise-node.ts [--seed 1] [--seconds 180] [--steps N] [--levels easy] [--wide on|off]
 *     [--rightFirst 0.2] [--batch 32] [--save FILE] [--set group.field=value …]
 *
 * `--wide on` adds the wide families' functions to the built-in training tasks; `--save` writes
 * the final policy as a checkpoint file (a built-in base is one). Prints one JSON object last.
 */
import { writeFileSync } from 'node:fs';
import { defaultRunConfig, withTaskKind } from '../../src/lib/config/run-config.ts';
import { TOOLUSE_ENV_CONFIG } from '../../src/lib/env/config.ts';
import { oneTurn, summarizeEpisode, toolUseFigures } from '../../src/lib/env/evaluate.ts';
import { LEVELS, type Level } from '../../src/lib/env/suite.ts';
import { generateToolUseTasks, toolUseGeneralisationTasks } from '../../src/lib/env/tooluse.ts';
import { checkpointToText } from '../../src/lib/policy/checkpoint-file.ts';
import { trainerConfigOf } from '../../src/lib/rl/learner-config.ts';
import { reviseBatch, reviseSequences, wideToolUseTasks } from '../../src/lib/rl/revise-imitation.ts';
import { PolicyTrainer } from '../../src/lib/rl/trainer.ts';
import { Rng } from '../../src/lib/random.ts';
import { CachedSandbox } from '../../src/lib/sandbox/cache.ts';
import { createNodeQuickJS } from '../../src/lib/sandbox/quickjs-node.ts';
import { flag, greedyEpisodes, useBackend, withSets } from './node-kit.ts';

const SEED = Number(flag('seed', '1'));
const SECONDS = Number(flag('seconds', '180'));
/** Stop after this many steps when it comes before `--seconds` (compare runs at equal steps on a loaded machine). */
const STEPS = Number(flag('steps', 'Infinity'));
const BATCH = Number(flag('batch', '32'));
const WIDE = flag('wide', 'on') === 'on';
const RIGHT_FIRST = Number(flag('rightFirst', '0.2'));
const SAVE = flag('save', '');
const LEVEL_LIST = flag('levels', 'easy').split(',') as Level[];
if (!LEVEL_LIST.every((l) => (LEVELS as readonly string[]).includes(l)))
  throw new Error(`--levels takes ${LEVELS.join(', ')}`);

const base = withTaskKind(defaultRunConfig(SEED), 'tooluse');
const settings = withSets({
  ...base,
  seed: SEED,
  env: { ...TOOLUSE_ENV_CONFIG, autoRun: true },
  learner: { ...base.learner, lrHalfLife: 0 },
});
const env = { ...settings.env, limits: { deadlineMs: 1000 } };
const modelArgs = settings.policy.model;

await useBackend('wasm');

// Tasks: the built-in split (seed 1, as the page); the wide functions checked against every held-out task.
const builtIn = generateToolUseTasks(1);
const heldOut = [...builtIn.filter((t) => t.heldOut), ...toolUseGeneralisationTasks(builtIn)];
const train = [
  ...builtIn.filter((t) => !t.heldOut && LEVEL_LIST.includes(t.level)),
  ...(WIDE ? wideToolUseTasks(heldOut, LEVEL_LIST) : []),
];
const sandbox = new CachedSandbox(await createNodeQuickJS());
// Supervised: −log π of the fix's tokens (the `pg` loss with advantage 1), at the run's learning rate.
const trainer = new PolicyTrainer(modelArgs, trainerConfigOf({ ...settings.learner, loss: 'pg' }, SEED));
const rng = new Rng(SEED);

const t0 = performance.now();
let steps = 0;
let lastLoss = NaN;
while ((performance.now() - t0) / 1000 < SECONDS && steps < STEPS) {
  const tasks = Array.from({ length: BATCH }, () => rng.pick(train));
  const seqs = await reviseSequences(tasks, env, sandbox, rng, RIGHT_FIRST);
  const m = await trainer.trainStep(reviseBatch(seqs, settings.learner.contextLength));
  lastLoss = m.pgLoss;
  steps += 1;
  if (steps % 50 === 0)
    console.log(
      `# step ${steps} loss ${m.pgLoss.toFixed(4)} ${((performance.now() - t0) / 1000).toFixed(0)} s`,
    );
}

/** Greedy play of `tasks` with the automatic first run, and again at one turn (the same policy). */
async function figures(tasks: typeof builtIn) {
  const eps = await greedyEpisodes(tasks, trainer.params, modelArgs, sandbox, env);
  const sums = eps.map((e, i) => summarizeEpisode(e, tasks[i] ?? { heldOut: false }));
  const one = await greedyEpisodes(tasks, trainer.params, modelArgs, sandbox, oneTurn(env));
  const r3 = (x: number | null | undefined) =>
    x === null || x === undefined ? null : Math.round(x * 1000) / 1000;
  const f = toolUseFigures(sums);
  return {
    tasks: tasks.length,
    success: r3(sums.filter((s) => s.solved).length / Math.max(1, sums.length)),
    successOneTurn: r3(one.filter((e) => e.solved).length / Math.max(1, one.length)),
    reviseRate: r3(f?.reviseRate),
    copyRate: r3(f?.copyRate),
    runFraction: r3(f?.runFraction),
    meanTurns: r3(sums.reduce((s, e) => s + e.turns, 0) / Math.max(1, sums.length)),
  };
}

const ofLevels = (t: (typeof builtIn)[number]) => LEVEL_LIST.includes(t.level);
const result = {
  seed: SEED,
  seconds: SECONDS,
  steps,
  lastLoss: Math.round(lastLoss * 1e4) / 1e4,
  levels: LEVEL_LIST,
  wide: WIDE,
  trainTasks: train.length,
  pointerDim: modelArgs.pointerDim ?? 0,
  tieEmbeddings: modelArgs.tieEmbeddings ?? false,
  heldOut: await figures(builtIn.filter((t) => t.heldOut && ofLevels(t))),
  train: await figures(builtIn.filter((t) => !t.heldOut && ofLevels(t))),
  generalisation: await figures(toolUseGeneralisationTasks(builtIn).filter(ofLevels)),
};
if (SAVE) writeFileSync(SAVE, checkpointToText(await trainer.exportPolicy(true)));
console.log(JSON.stringify(result));
sandbox.dispose?.();
process.exit(0);
