import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_ARGS, type ModelArgs } from './config';
import { DEFAULT_LORA, initLora, LORA_TRAINED_WHOLE, loraTargets, mergedWeights } from './lora';
import { forward, initParams } from './model';

const args: ModelArgs = { ...DEFAULT_MODEL_ARGS, contextLength: 32, dModel: 16, nHeads: 2, dMlp: 32 };

beforeAll(async () => {
  await tf.setBackend('cpu');
});

const probe = () => tf.tensor2d([[1, 9, 20, 30, 6, 17]], [1, 6], 'int32');

describe('LoRA', () => {
  it.each([
    ['own head', args],
    ['tied embeddings', { ...args, tieEmbeddings: true }],
  ])('starts equal to the base (B = 0) and adapts every attention and MLP matrix (%s)', (_label, args) => {
    const base = initParams(args, 1);
    const adapters = initLora(base, args, DEFAULT_LORA, 2);
    expect(adapters.size).toBe(2 * loraTargets(args).length + LORA_TRAINED_WHOLE.length);
    const merged = mergedWeights(base, adapters, DEFAULT_LORA);
    const a = forward(base, args, probe()).logits.dataSync();
    const b = forward(merged, args, probe()).logits.dataSync();
    a.forEach((x, i) => expect(b[i]).toBeCloseTo(x, 6));
    tf.dispose([...merged.values(), ...adapters.values(), ...base.values()]);
  });
});
