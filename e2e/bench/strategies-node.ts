/**
 * The update strategies side by side, in node: `learn-node.ts` once per strategy and seed, each
 * for the same number of versions (η = 0: the same episodes), the rest of the run config as the
 * learn bench's. Per strategy: ppoUpdate's ms per version and per optimiser step, tensors trained
 * per step, bytes of a stored version (policy and Adam state), greedy success on the easy training
 * and held-out tasks at the end, and `auto`'s switches with their reasons.
 *
 *   npx tsx e2e/bench/strategies-node.ts [--versions 100] [--seeds 1,2]
 *     [--strategies full,frozen,adaptive,selective,selective:gradient,gradual,auto]
 *     [--set group.field=value]...
 *
 * `selective` ranks tensors by the seed's importance, `selective:gradient` by the gradient-based one
 * (`learner.selectiveBy`).
 *
 * Prints one JSON object last: the step times, every row, and per strategy the mean ± sd over
 * seeds of success, ms per step and per version, and bytes per stored version (the `strategies`
 * bench scenario reads it).
 *
 * First, in this process, the optimiser step alone per strategy on one batch (32 rows of 64
 * tokens, `rl/synthetic.ts`), the strategies' steps interleaved round by round so that a load
 * that drifts (a shared machine) weighs on each alike: median ms per step (`--stepRounds 15`,
 * 0 skips it), `selective` by either importance (by gradient after one full step has measured it),
 * `gradual` at its first stage (the heads) and its second (the top block too).
 *
 * `lora` is left out: learn-node trains every parameter (the learn bench measures LoRA).
 */
import * as tf from '@tensorflow/tfjs';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { createRequire } from 'node:module';
import path from 'node:path';
import { defaultRunConfig } from '../../src/lib/config/run-config.ts';
import { trainerConfigOf, UPDATE_STRATEGIES, type UpdateStrategy } from '../../src/lib/rl/learner-config.ts';
import { imitationBatch } from '../../src/lib/rl/synthetic.ts';
import { meanSd } from '../../src/lib/run/tooluse-bench.ts';
import { PolicyTrainer } from '../../src/lib/rl/trainer.ts';
import type { StrategySwitch } from '../../src/lib/rl/strategy.ts';
import { flag, runLearnNode } from './node-kit.ts';

const VERSIONS = Number(flag('versions', '100'));
const STEP_ROUNDS = Number(flag('stepRounds', '15'));
const SEEDS = flag('seeds', '1').split(',').map(Number);
const STRATEGIES = flag('strategies', 'full,frozen,adaptive,selective,selective:gradient,gradual,auto').split(
  ',',
);
/** A `--strategies` entry: a strategy, or `selective:gradient` (selective by the gradient's importance). */
function armOf(entry: string): { strategy: UpdateStrategy; byGradient: boolean } {
  const [strategy = '', by] = entry.split(':');
  const known = (UPDATE_STRATEGIES as readonly string[]).includes(strategy) && strategy !== 'lora';
  if (!known || (by !== undefined && !(strategy === 'selective' && by === 'gradient')))
    throw new Error(
      `--strategies takes ${UPDATE_STRATEGIES.filter((x) => x !== 'lora').join(', ')} or selective:gradient, not ${entry}`,
    );
  return { strategy: strategy as UpdateStrategy, byGradient: by === 'gradient' };
}
STRATEGIES.forEach(armOf);
// The --set flags pass through to every run.
const sets = process.argv.flatMap((a, i) => (a === '--set' ? ['--set', process.argv[i + 1] ?? ''] : []));

/** The last JSON line learn-node prints, as far as this script reads it. */
interface LearnResult {
  versions: number;
  episodes: number;
  finalTrain: number;
  finalHeldOut: number;
  strategy: {
    updateMs: number;
    stepMs: number;
    msPerKPositions: number;
    tensorsTrained: number;
    tensors: number;
    bytesPerVersion: { policy: number; optimizer: number };
    finalRate: number | null;
    switches: StrategySwitch[];
  };
}

function run(entry: string, seed: number): LearnResult {
  const { strategy, byGradient } = armOf(entry);
  return runLearnNode<LearnResult>(
    [
      '--seed',
      String(seed),
      '--maxVersions',
      String(VERSIONS),
      '--evalEvery',
      '0',
      '--seconds',
      '100000',
      '--set',
      `learner.strategy=${strategy}`,
      ...(byGradient ? ['--set', 'learner.selectiveBy=gradient'] : []),
      ...sets,
    ],
    `${entry} seed ${seed}`,
  );
}

// ---- the optimiser step alone, interleaved -----------------------------------------------------
const steps: Record<string, unknown>[] = [];
async function stepTimes(): Promise<void> {
  const dir = path.dirname(
    createRequire(import.meta.url).resolve('@tensorflow/tfjs-backend-wasm/package.json'),
  );
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false); // single-threaded, as the page's workers
  setWasmPaths(`${path.join(dir, 'dist')}/`);
  if (!(await tf.setBackend('wasm'))) throw new Error('no wasm backend');
  const { learner, policy } = defaultRunConfig();
  const batch = imitationBatch(32, learner.contextLength, 1);
  const arms: { label: string; trainer: PolicyTrainer; version: number }[] = (
    [
      ['full', 0],
      ['frozen', 0],
      ['selective', 0],
      ['selective:gradient', 1],
      ['gradual', 0],
      ['gradual', learner.gradualEvery],
    ] as const
  ).map(([entry, version]) => {
    const { strategy, byGradient } = armOf(entry);
    return {
      label: strategy === 'gradual' && version ? `${entry}@v${version}` : entry,
      trainer: new PolicyTrainer(policy.model, {
        ...trainerConfigOf(learner, 1),
        strategy,
        selectiveBy: byGradient ? 'gradient' : 'seed',
      }),
      version,
    };
  });
  for (const a of arms) {
    // Selective by gradient trains every tensor once, to measure the importance it ranks by.
    if (a.label === 'selective:gradient') {
      await a.trainer.beginUpdate({ version: 0 });
      await a.trainer.trainStep(batch);
    }
    await a.trainer.beginUpdate({ version: a.version });
  }
  const ms = new Map<string, number[]>(arms.map((a) => [a.label, []]));
  for (let round = -2; round < STEP_ROUNDS; round++)
    for (const a of arms) {
      const t0 = performance.now();
      await a.trainer.trainStep(batch);
      if (round >= 0) ms.get(a.label)?.push(performance.now() - t0);
    }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? NaN;
  for (const a of arms) {
    const times = ms.get(a.label) ?? [];
    const row = {
      step: a.label,
      medianMs: Number(median(times).toFixed(1)),
      minMs: Number(Math.min(...times).toFixed(1)),
      tensorsTrained: `${a.trainer.trainable().length}/${a.trainer.params.size}`,
    };
    steps.push(row);
    console.log(JSON.stringify(row));
    a.trainer.dispose();
  }
}
if (STEP_ROUNDS > 0) await stepTimes();

// ---- learn-node per strategy and seed ---------------------------------------------------------
interface Row {
  strategy: string;
  seed: number;
  versions: number;
  episodes: number;
  updateMsPerVersion: number;
  msPerStep: number;
  /** ms per step per 1 000 batch positions (rows × length): the step's cost apart from its batch's size. */
  msPerKPositions: number;
  tensorsTrained: string;
  bytesPerVersion: number;
  optimizerBytes: number;
  finalRate: number | null;
  successTrain: number;
  successHeldOut: number;
  switches: string[];
  wallSeconds: number;
}
const rows: Row[] = [];
for (const seed of SEEDS)
  for (const strategy of STRATEGIES) {
    const t0 = performance.now();
    const r = run(strategy, seed);
    const s = r.strategy;
    const row: Row = {
      strategy,
      seed,
      versions: r.versions,
      episodes: r.episodes,
      updateMsPerVersion: s.updateMs,
      msPerStep: s.stepMs,
      msPerKPositions: s.msPerKPositions,
      tensorsTrained: `${s.tensorsTrained}/${s.tensors}`,
      bytesPerVersion: s.bytesPerVersion.policy + s.bytesPerVersion.optimizer,
      optimizerBytes: s.bytesPerVersion.optimizer,
      finalRate: s.finalRate,
      successTrain: r.finalTrain,
      successHeldOut: r.finalHeldOut,
      switches: s.switches.map((w) => `v${w.version} ${w.from}→${w.to}: ${w.reason}`),
      wallSeconds: Math.round((performance.now() - t0) / 1000),
    };
    rows.push(row);
    console.log(JSON.stringify(row));
  }
console.table(
  rows.map((r) => {
    const { switches, ...rest } = r;
    return { ...rest, switches: switches.length };
  }),
);

// ---- per strategy over seeds, one JSON object last ------------------------------------------
const figure = (strategy: string, key: keyof (typeof rows)[number]) =>
  meanSd(rows.filter((r) => r.strategy === strategy).map((r) => Number(r[key])));
const perStrategy = Object.fromEntries(
  STRATEGIES.map((strategy) => [
    strategy,
    {
      successTrain: figure(strategy, 'successTrain'),
      successHeldOut: figure(strategy, 'successHeldOut'),
      msPerStep: figure(strategy, 'msPerStep'),
      msPerKPositions: figure(strategy, 'msPerKPositions'),
      updateMsPerVersion: figure(strategy, 'updateMsPerVersion'),
      bytesPerVersion: figure(strategy, 'bytesPerVersion'),
      tensorsTrained: rows.find((r) => r.strategy === strategy)?.tensorsTrained ?? null,
      switches: rows.filter((r) => r.strategy === strategy).flatMap((r) => r.switches),
    },
  ]),
);
console.log(JSON.stringify({ versions: VERSIONS, seeds: SEEDS, steps, rows, perStrategy }));
