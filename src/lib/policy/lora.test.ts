import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ENV_CONFIG } from '../env/config';
import { runEpisodes } from '../env/evaluate';
import { generateTasks } from '../env/families';
import { rlooAdvantages } from '../rl/advantages';
import { trajectoryBatch, TrajectoryRecorder } from '../rl/trajectory';
import type { QuickJSSandbox } from '../sandbox/quickjs';
import { createNodeQuickJS } from '../sandbox/quickjs-node';
import { DEFAULT_MODEL_ARGS, DEFAULT_TRAINER_CONFIG, type ModelArgs } from './config';
import { DEFAULT_LORA, initLora, loraTargets, mergedWeights, mergeLora } from './lora';
import { forward, initParams } from './model';
import { CachedPolicyAgent, DEFAULT_SAMPLER } from './sampler';
import { PolicyTrainer } from './trainer';
import { adaptersFromCheckpoint, paramsFromCheckpoint } from './weights';

const args: ModelArgs = { ...DEFAULT_MODEL_ARGS, contextLength: 32, dModel: 16, nHeads: 2, dMlp: 32 };
const env = { ...DEFAULT_ENV_CONFIG, contextLength: 32, maxTurns: 1, maxTokensPerTurn: 6 };

let sandbox: QuickJSSandbox;
beforeAll(async () => {
  await tf.setBackend('cpu');
  sandbox = await createNodeQuickJS();
});
afterAll(() => sandbox.dispose());

const probe = () => tf.tensor2d([[1, 9, 20, 30, 6, 17]], [1, 6], 'int32');

describe('LoRA', () => {
  it('starts equal to the base (B = 0) and adapts every attention and MLP matrix', () => {
    const base = initParams(args, 1);
    const adapters = initLora(base, args, DEFAULT_LORA, 2);
    expect(adapters.size).toBe(2 * loraTargets(args).length);
    const merged = mergedWeights(base, adapters, DEFAULT_LORA);
    const a = forward(base, args, probe()).logits.dataSync();
    const b = forward(merged, args, probe()).logits.dataSync();
    a.forEach((x, i) => expect(b[i]).toBeCloseTo(x, 6));
    tf.dispose([...merged.values(), ...adapters.values(), ...base.values()]);
  });

  it('trains only the adapters, publishes only them, and a rollout side rebuilds the same policy', async () => {
    const trainer = new PolicyTrainer(
      args,
      { ...DEFAULT_TRAINER_CONFIG, learningRate: 3e-2 },
      undefined,
      DEFAULT_LORA,
    );
    const full = await trainer.exportPolicy(true);
    const baseBefore = [...trainer.params.values()].map((v) => v.dataSync().slice());
    // One RL step on real episodes collected with the (merged) policy.
    const rollBase = paramsFromCheckpoint(full);
    const agent = new CachedPolicyAgent('p', rollBase, args, { ...DEFAULT_SAMPLER, rows: 4 });
    const rec = new TrajectoryRecorder(0);
    const tasks = generateTasks(1)
      .filter((t) => t.level === 'easy')
      .slice(0, 2)
      .flatMap((t) => [t, t]);
    const eps = await runEpisodes(tasks, agent, sandbox, env, rec.onToken);
    agent.dispose();
    const trajs = eps.map((e) => rec.trajectory(e, e.task.id));
    const adv = rlooAdvantages(
      trajs.map((t) => t.return),
      trajs.map((t) => t.group),
    ).map((a, i) => a + (i % 2 ? 1 : -1));
    const m = await trainer.trainStep(trajectoryBatch(trajs, adv, args.contextLength));
    expect(Number.isFinite(m.loss)).toBe(true);
    // The base did not move.
    [...trainer.params.values()].forEach((v, i) =>
      expect(Array.from(v.dataSync())).toEqual(Array.from(baseBefore[i] ?? [])),
    );
    const lora = await trainer.exportPolicy();
    expect(lora.lora).toEqual(DEFAULT_LORA);
    expect(lora.params.entries.every((e) => /lora_[ab]$/.test(e.name))).toBe(true);
    expect(lora.params.data.byteLength).toBeLessThan(full.params.data.byteLength / 3);
    // The rollout side: base from the full version + adapters = the trainer's weights.
    const adapters = adaptersFromCheckpoint(lora);
    const merged = mergedWeights(rollBase, adapters, DEFAULT_LORA);
    const own = trainer.adapters;
    if (!own) throw new Error('no adapters');
    const want = tf.tidy(() =>
      forward(mergeLora(trainer.params, own, DEFAULT_LORA), args, probe()).logits.dataSync(),
    );
    const baseOnly = tf.tidy(() => forward(trainer.params, args, probe()).logits.dataSync());
    const got = tf.tidy(() => forward(merged, args, probe()).logits.dataSync());
    got.forEach((x, i) => expect(x).toBeCloseTo(want[i] ?? NaN, 5));
    expect(Array.from(got).some((x, i) => Math.abs(x - (baseOnly[i] ?? 0)) > 1e-5)).toBe(true); // the adapters moved it
    // Exported merged (for evaluating elsewhere): every parameter, the same policy.
    const whole = await trainer.exportMerged();
    expect(whole.lora).toBeUndefined();
    const wholeParams = paramsFromCheckpoint(whole);
    const fromWhole = tf.tidy(() => forward(wholeParams, args, probe()).logits.dataSync());
    fromWhole.forEach((x, i) => expect(x).toBeCloseTo(want[i] ?? NaN, 5));
    tf.dispose([...merged.values(), ...adapters.values(), ...rollBase.values(), ...wholeParams.values()]);
    trainer.dispose();
  }, 60_000);
});
