/**
 * Reads Hugging Face GPT-2 folders back into the page's policy (`importHfGpt2`) and plays the
 * built-in tasks of a level greedily with each, as the page's evaluator does (`greedyEpisodes`):
 * the check that a folder a Python trainer wrote (`cluster/train_trl.py`) still runs here.
 *
 *   npx tsx e2e/bench/eval-hf-node.ts DIR [DIR...] [--level easy] [--kind examples|tooluse] [--seed 1]
 *
 * Prints one JSON line per folder: its success on the level's training, held-out and
 * generalisation tasks, and a few held-out programs; then one line of every folder's held-out success.
 */
import * as tf from '@tensorflow/tfjs';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { defaultRunConfig, withTaskKind } from '../../src/lib/config/run-config.ts';
import type { Episode } from '../../src/lib/env/episode.ts';
import { TASK_KINDS, type Task } from '../../src/lib/env/suite.ts';
import { builtInTasks, generalisationOf } from '../../src/lib/env/task-kinds.ts';
import { importHfGpt2, paramsFromTensors, type ModelFiles } from '../../src/lib/export/hf-gpt2.ts';
import { CachedSandbox } from '../../src/lib/sandbox/cache.ts';
import { createNodeQuickJS } from '../../src/lib/sandbox/quickjs-node.ts';
import { flag, greedyEpisodes } from './node-kit.ts';

const LEVEL = flag('level', 'easy');
const SEED = Number(flag('seed', '1'));
const kind = TASK_KINDS.find((k) => k === flag('kind', 'examples'));
if (!kind) throw new Error(`--kind takes ${TASK_KINDS.join(', ')}`);
// Folders: the arguments that are neither a flag nor a flag's value.
const dirs = process.argv
  .slice(2)
  .filter((a, i, all) => !a.startsWith('--') && !all[i - 1]?.startsWith('--'));
if (dirs.length === 0) throw new Error('usage: eval-hf-node.ts DIR [DIR...] [--level easy]');

if (!(await tf.setBackend('cpu'))) throw new Error("tf.setBackend('cpu') failed");
const env = withTaskKind(defaultRunConfig(2), kind).env;
const builtIn = builtInTasks(kind, SEED);
const ofLevel = builtIn.filter((t) => t.level === LEVEL);
if (ofLevel.length === 0) throw new Error(`no built-in ${kind} tasks of level ${LEVEL}`);
// The tasks without their split flags, as learn-node.ts hands them to the evaluator.
const plain = ({ id, level, kind: k, examples, tests, hidden }: Task): Task =>
  k ? { id, level, kind: k, examples, tests, hidden } : { id, level, examples, hidden };
const splits = {
  train: ofLevel.filter((t) => !t.heldOut).map(plain),
  heldOut: ofLevel.filter((t) => t.heldOut).map(plain),
  generalisation: generalisationOf(builtIn)
    .filter((t) => t.level === LEVEL)
    .map(plain),
};
const sandbox = new CachedSandbox(await createNodeQuickJS());
const rate = (eps: Episode[]) => eps.filter((e) => e.solved).length / Math.max(1, eps.length);
const heldOut: Record<string, number> = {};

for (const dir of dirs) {
  const files: ModelFiles = new Map(
    readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => [e.name, new Uint8Array(readFileSync(path.join(dir, e.name)))]),
  );
  const { args, tensors } = importHfGpt2(files);
  const params = paramsFromTensors(tensors);
  const success: Record<string, number> = {};
  let programs = '';
  for (const [split, tasks] of Object.entries(splits)) {
    const episodes = await greedyEpisodes(tasks, params, args, sandbox, env);
    success[split] = rate(episodes);
    if (split === 'heldOut')
      programs = episodes
        .slice(0, 8)
        .map((e) => `${e.task.id}${e.solved ? '✓' : '✗'}${e.turns.map((t) => t.program || '∅').join('|')}`)
        .join(' ');
  }
  heldOut[dir] = success.heldOut ?? 0;
  tf.dispose([...params.values()]);
  console.log(
    JSON.stringify({
      folder: dir,
      level: LEVEL,
      tasks: Object.fromEntries(Object.entries(splits).map(([k, v]) => [k, v.length])),
      success,
      programs,
    }),
  );
}
sandbox.dispose();
// Last, the held-out success of every folder side by side.
console.log(JSON.stringify({ heldOut }));
