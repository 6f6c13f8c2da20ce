import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ENV_CONFIG } from '../env/config';
import { runEpisodes } from '../env/evaluate';
import { generateTasks } from '../env/families';
import { rlooAdvantages } from './advantages';
import { trajectoryBatch, TrajectoryRecorder } from './trajectory';
import type { QuickJSSandbox } from '../sandbox/quickjs';
import { createNodeQuickJS } from '../sandbox/quickjs-node';
import { DEFAULT_MODEL_ARGS, type ModelArgs } from '../policy/config';
import { DEFAULT_TRAINER_CONFIG } from './learner-config';
import { DEFAULT_LORA, LORA_TRAINED_WHOLE, loraTargets, mergedWeights, mergeLora } from '../policy/lora';
import { forward } from '../policy/model';
import { CachedPolicyAgent, DEFAULT_SAMPLER } from '../policy/sampler';
import { PolicyTrainer } from './trainer';
import { adaptersFromCheckpoint, paramsFromCheckpoint } from '../policy/weights';

const args: ModelArgs = { ...DEFAULT_MODEL_ARGS, contextLength: 32, dModel: 16, nHeads: 2, dMlp: 32 };
const env = { ...DEFAULT_ENV_CONFIG, contextLength: 32, maxTurns: 1, maxTokensPerTurn: 6 };

let sandbox: QuickJSSandbox;
beforeAll(async () => {
  await tf.setBackend('cpu');
  sandbox = await createNodeQuickJS();
});
afterAll(() => sandbox.dispose());

const probe = () => tf.tensor2d([[1, 9, 20, 30, 6, 17]], [1, 6], 'int32');

describe('LoRA training', () => {
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
    expect(lora.params.entries.map((e) => e.name).filter((n) => !/lora_[ab]$/.test(n))).toEqual([
      ...LORA_TRAINED_WHOLE,
    ]);
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

  it('loads a LoRA version stored without the value head (an earlier build): the head stays the base’s', () => {
    const trainer = new PolicyTrainer(args, DEFAULT_TRAINER_CONFIG, undefined, DEFAULT_LORA);
    const own = trainer.adapters;
    if (!own) throw new Error('no adapters');
    const older = new Map(
      [...own].filter(([n]) => !LORA_TRAINED_WHOLE.includes(n)).map(([n, v]) => [n, v.add(1)]),
    );
    trainer.loadAdapters(older);
    expect(own.get(`${loraTargets(args)[0]}.lora_b`)?.dataSync()[0]).toBeCloseTo(1, 6);
    expect(Array.from(own.get('value.w')?.dataSync() ?? [])).toEqual(
      Array.from(trainer.params.get('value.w')?.dataSync() ?? []),
    );
    // Anything else missing is still an error.
    const [first] = older.keys();
    older.delete(first ?? '');
    expect(() => trainer.loadAdapters(older)).toThrow(/lacks adapter/);
    tf.dispose([...older.values()]);
    trainer.dispose();
  });

  it('trains the value head beside the adapters, so the value loss is fitted by the head', async () => {
    // Returns of 2 everywhere: a frozen random value head (|V| ≲ 1) leaves a floor of ~½(2 − V)²
    // the adapters would strain against; trained whole, the head fits them.
    const fit = async (lora: typeof DEFAULT_LORA | undefined) => {
      const trainer = new PolicyTrainer(
        args,
        { ...DEFAULT_TRAINER_CONFIG, learningRate: 3e-2, valueCoef: 1, entropyCoef: 0 },
        undefined,
        lora,
      );
      const B = 2;
      const T = 6;
      const batch = {
        batch: B,
        length: T,
        tokens: Int32Array.from({ length: B * T }, (_, i) => 5 + (i % 7)),
        actions: Int32Array.from({ length: B * T }, (_, i) => 5 + ((i + 1) % 7)),
        mask: new Float32Array(B * T).fill(1),
        advantages: new Float32Array(B * T),
        returns: new Float32Array(B * T).fill(2),
      };
      let m = await trainer.trainStep(batch);
      const first = m.valueLoss;
      for (let i = 0; i < 60; i++) m = await trainer.trainStep(batch);
      const published = lora ? adaptersFromCheckpoint(await trainer.exportPolicy()) : null;
      const head = published?.get('value.b')?.dataSync()[0];
      tf.dispose([...(published?.values() ?? [])]);
      trainer.dispose();
      return { first, last: m.valueLoss, head };
    };
    const full = await fit(undefined);
    const lora = await fit(DEFAULT_LORA);
    expect(lora.last).toBeLessThan(lora.first / 10);
    expect(lora.last).toBeLessThan(Math.max(0.05, 2 * full.last));
    // The version publishes the trained head: a rollout side's values are the trainer's.
    expect(lora.head).toBeGreaterThan(0.1); // value.b starts at 0 and moves towards the returns
  }, 60_000);
});
