/**
 * Exports a policy as a Hugging Face GPT-2 folder (issue #42, `src/lib/export/`), with what
 * `cluster/check_export.py` checks it against: the page's logits on a few token sequences and the
 * tasks as JSONL.
 *
 *   npx tsx e2e/bench/export-node.ts [--out bench-results/export] [--from init|easy-half|FILE]
 *     [--trainSteps 20] [--seed 1] [--kind examples|tooluse] [--backend cpu|wasm]
 *     [--set group.field=value]...   model args with `--set policy.model.dModel=32` (from init)
 *
 *   --from init        fresh weights of `--seed`, then `--trainSteps` Adam steps on the imitation
 *                      batch (`rl/synthetic.ts`), so that no tensor keeps its initial value
 *   --from easy-half   the built-in base (`policy/bases/`), a policy trained with RL
 *   --from FILE        parameters `learn-node.ts --saveWeights FILE` wrote (model args from --set)
 *
 * Writes into --out: config.json, generation_config.json, model.safetensors, tokenizer.json,
 * tokenizer_config.json (the model folder), logits.json (`{ backend, model, sequences: [{ ids,
 * text }], logits: [T][V] per sequence }`, our forward pass), tasks.jsonl and tasks.parquet (the
 * built-in tasks of the kind and their generalisation tasks: JSONL rows, and verl's schema;
 * `export/datasets.ts`), and greedy.jsonl (the held-out and generalisation tasks played greedily
 * as the page's evaluator plays them, with each policy token's legal ids; `export/greedy.ts`).
 */
import * as tf from '@tensorflow/tfjs';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultRunConfig, withTaskKind } from '../../src/lib/config/run-config.ts';
import { TASK_KINDS } from '../../src/lib/env/suite.ts';
import { builtInTasks, generalisationOf } from '../../src/lib/env/task-kinds.ts';
import {
  feedbackTokens,
  observationTokens,
  renderTokens,
  sourceToTokens,
} from '../../src/lib/env/tokenizer.ts';
import { RUN, SUBMIT, tokenId } from '../../src/lib/env/vocab.ts';
import { tasksJsonl, verlParquet } from '../../src/lib/export/datasets.ts';
import { greedyJsonl, greedyRows, pageLogits } from '../../src/lib/export/greedy.ts';
import { exportHfGpt2, hfGpt2Refusal, readPolicyTensors } from '../../src/lib/export/hf-gpt2.ts';
import { playEnvOf } from '../../src/lib/env/task-kinds.ts';
import { CachedPolicyAgent, DEFAULT_SAMPLER } from '../../src/lib/policy/sampler.ts';
import { CachedSandbox } from '../../src/lib/sandbox/cache.ts';
import { createNodeQuickJS } from '../../src/lib/sandbox/quickjs-node.ts';
import { checkpointFromText } from '../../src/lib/policy/checkpoint-file.ts';
import type { ModelArgs } from '../../src/lib/policy/config.ts';
import { initParams, type Params } from '../../src/lib/policy/model.ts';
import { paramsFromCheckpoint } from '../../src/lib/policy/weights.ts';
import { DEFAULT_TRAINER_CONFIG } from '../../src/lib/rl/learner-config.ts';
import { imitationBatch } from '../../src/lib/rl/synthetic.ts';
import { PolicyTrainer } from '../../src/lib/rl/trainer.ts';
import { flag, withSets } from './node-kit.ts';

const OUT = flag('out', 'bench-results/export');
const FROM = flag('from', 'init');
const TRAIN_STEPS = Number(flag('trainSteps', '20'));
const SEED = Number(flag('seed', '1'));
const BACKEND = flag('backend', 'cpu');
const kind = TASK_KINDS.find((k) => k === flag('kind', 'examples'));
if (!kind) throw new Error(`--kind takes ${TASK_KINDS.join(', ')}, not ${flag('kind', '')}`);
if (BACKEND !== 'cpu' && BACKEND !== 'wasm') throw new Error(`--backend takes cpu or wasm, not ${BACKEND}`);

if (BACKEND === 'wasm') {
  const dir = path.dirname(
    createRequire(import.meta.url).resolve('@tensorflow/tfjs-backend-wasm/package.json'),
  );
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
  setWasmPaths(`${path.join(dir, 'dist')}/`);
}
if (!(await tf.setBackend(BACKEND))) throw new Error(`tf.setBackend('${BACKEND}') failed`);
await tf.ready();

const settings = withSets({ ...withTaskKind(defaultRunConfig(2), kind), seed: SEED });

/** The policy to export: its args and parameters (the caller disposes them). */
async function policy(): Promise<{ args: ModelArgs; params: Params; about: string }> {
  if (FROM === 'easy-half') {
    const file = fileURLToPath(new URL('../../src/lib/policy/bases/easy-half.json', import.meta.url));
    const ckpt = checkpointFromText(readFileSync(file, 'utf8'), 'the built-in base easy-half');
    return {
      args: ckpt.model,
      params: paramsFromCheckpoint(ckpt),
      about: `built-in base easy-half (step ${ckpt.step})`,
    };
  }
  const args = settings.policy.model;
  if (FROM !== 'init') {
    const saved = JSON.parse(readFileSync(FROM, 'utf8')) as Record<string, number[]>;
    const params = initParams(args, SEED);
    for (const [name, v] of params) {
      const data = saved[name];
      if (!data || data.length !== v.size) throw new Error(`${FROM} has no ${name} of ${v.size} values`);
      const t = tf.tensor(data, v.shape);
      v.assign(t);
      t.dispose();
    }
    return { args, params, about: `parameters of ${FROM}` };
  }
  const trainer = new PolicyTrainer(args, { ...DEFAULT_TRAINER_CONFIG, seed: SEED, learningRate: 1e-2 });
  const batch = imitationBatch(8, args.contextLength, SEED);
  let loss = NaN;
  for (let i = 0; i < TRAIN_STEPS; i++) loss = (await trainer.trainStep(batch)).pgLoss;
  // The trainer's parameters are handed over; its optimiser state is not needed.
  trainer.optimizer.dispose();
  return {
    args,
    params: trainer.params,
    about: `seed ${SEED}, ${TRAIN_STEPS} imitation steps (policy loss ${loss.toFixed(3)})`,
  };
}

const { args, params, about } = await policy();
const refusal = hfGpt2Refusal(args);
if (refusal) {
  console.error(`not exported: ${refusal}`);
  process.exit(1);
}

// Token sequences as the page plays them: observations, a program and its `<run>` feedback, a
// submit, and one filling the whole context.
const tasks = builtInTasks(kind, 1);
const program = (src: string) => sourceToTokens(src).map(tokenId);
const first = tasks[0];
const second = tasks[1];
if (!first || !second) throw new Error('no built-in tasks');
const obs = observationTokens(first.examples);
const sequences: number[][] = [
  obs,
  [
    ...obs,
    ...program('x*2+1'),
    RUN,
    ...feedbackTokens({ outputs: first.examples.map((e) => 2 * e.input + 1) }),
  ],
  [...observationTokens(second.examples), ...program('(x+3)%7'), SUBMIT],
  [...obs, ...program('x*x+1'), RUN, ...feedbackTokens({ error: 'runtime' }), ...program('x>3?x:9'), SUBMIT],
];
const long: number[] = [...obs];
while (long.length < args.contextLength)
  long.push(...program('x*9+(x%7)-3'), RUN, ...feedbackTokens({ outputs: [1, -2, 30] }));
sequences.push(long.slice(0, args.contextLength));
for (const s of sequences)
  if (s.length > args.contextLength) throw new Error(`a sequence of ${s.length} tokens exceeds the context`);

const logits = await pageLogits(params, args, sequences);

// The held-out and generalisation tasks played greedily, as the page's export plays them.
const allTasks = [...tasks, ...generalisationOf(tasks)];
const sandbox = new CachedSandbox(await createNodeQuickJS());
const agent = new CachedPolicyAgent('policy', params, args, { ...DEFAULT_SAMPLER, greedy: true, seed: 1 });
const greedy = await greedyRows(
  allTasks.filter((t) => t.heldOut),
  agent,
  sandbox,
  playEnvOf(settings),
);
agent.dispose();

const files = exportHfGpt2(args, await readPolicyTensors(params), {
  source: 'sandbox-rl-lab',
  policy: about,
});
mkdirSync(OUT, { recursive: true });
for (const [name, bytes] of files) writeFileSync(path.join(OUT, name), bytes);
writeFileSync(
  path.join(OUT, 'logits.json'),
  JSON.stringify({
    backend: tf.getBackend(),
    policy: about,
    model: args,
    sequences: sequences.map((ids) => ({ ids, text: renderTokens(ids) })),
    logits,
  }),
);
writeFileSync(path.join(OUT, 'tasks.jsonl'), tasksJsonl(allTasks));
writeFileSync(path.join(OUT, 'greedy.jsonl'), greedyJsonl(greedy));
writeFileSync(path.join(OUT, 'tasks.parquet'), verlParquet(allTasks));
tf.dispose([...params.values()]);
sandbox.dispose();
console.log(
  JSON.stringify({
    out: OUT,
    policy: about,
    model: args,
    backend: tf.getBackend(),
    files: [...files.keys(), 'logits.json', 'tasks.jsonl', 'tasks.parquet', 'greedy.jsonl'],
    sequences: sequences.length,
    tasks: allTasks.length,
    greedy: greedy.length,
    solved: greedy.filter((r) => r.solved).length,
  }),
);
