/**
 * The update strategies side by side, in node: `learn-node.ts` once per strategy and seed, each
 * for the same number of versions (η = 0: the same episodes), the rest of the run config as the
 * learn bench's. Per strategy: ppoUpdate's ms per version and per optimiser step, tensors trained
 * per step, bytes of a stored version (policy and Adam state), greedy success on the easy training
 * and held-out tasks at the end, and `auto`'s switches with their reasons.
 *
 *   npx tsx e2e/bench/strategies-node.ts [--versions 100] [--seeds 1,2]
 *     [--strategies full,frozen,adaptive,selective,gradual,auto] [--set group.field=value]...
 *
 * `lora` is left out: learn-node trains every parameter (the learn bench measures LoRA).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { UPDATE_STRATEGIES, type UpdateStrategy } from '../../src/lib/rl/learner-config.ts';
import type { StrategySwitch } from '../../src/lib/rl/strategy.ts';
import { flag } from './node-kit.ts';

const VERSIONS = Number(flag('versions', '100'));
const SEEDS = flag('seeds', '1').split(',').map(Number);
const STRATEGIES = flag('strategies', 'full,frozen,adaptive,selective,gradual,auto').split(',');
for (const s of STRATEGIES)
  if (!(UPDATE_STRATEGIES as readonly string[]).includes(s) || s === 'lora')
    throw new Error(
      `--strategies takes ${UPDATE_STRATEGIES.filter((x) => x !== 'lora').join(', ')}, not ${s}`,
    );
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
    tensorsTrained: number;
    tensors: number;
    bytesPerVersion: { policy: number; optimizer: number };
    finalRate: number | null;
    switches: StrategySwitch[];
  };
}

const learnNode = path.join(path.dirname(fileURLToPath(import.meta.url)), 'learn-node.ts');

function run(strategy: UpdateStrategy, seed: number): LearnResult {
  const args = [
    'tsx',
    learnNode,
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
    ...sets,
  ];
  const out = spawnSync('npx', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (out.status !== 0) throw new Error(`learn-node ${strategy} seed ${seed} failed:\n${out.stderr}`);
  const last = out.stdout
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'));
  if (!last) throw new Error(`learn-node ${strategy} seed ${seed} printed no result:\n${out.stdout}`);
  return JSON.parse(last) as LearnResult;
}

const rows: Record<string, unknown>[] = [];
for (const seed of SEEDS)
  for (const strategy of STRATEGIES as UpdateStrategy[]) {
    const t0 = performance.now();
    const r = run(strategy, seed);
    const s = r.strategy;
    const row = {
      strategy,
      seed,
      versions: r.versions,
      episodes: r.episodes,
      updateMsPerVersion: s.updateMs,
      msPerStep: s.stepMs,
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
    const { switches, ...rest } = r as { switches: string[] } & Record<string, unknown>;
    return { ...rest, switches: switches.length };
  }),
);
