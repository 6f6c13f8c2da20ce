import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_ARGS, type ModelArgs } from './config';
import { initParams } from './model';
import { DEFAULT_LORA } from './lora';
import {
  adaptersFromCheckpoint,
  packParams,
  paramsFromCheckpoint,
  unpackTensors,
  type Checkpoint,
} from './weights';

const small: ModelArgs = { ...DEFAULT_MODEL_ARGS, contextLength: 8, dModel: 16, dMlp: 32 };

beforeAll(async () => {
  await tf.setBackend('cpu');
});

describe('weights as data', () => {
  it('round-trips every parameter exactly through one ArrayBuffer', async () => {
    const params = initParams(small, 5);
    const packed = await packParams(params);
    const ckpt: Checkpoint = { format: 'sandbox-rl-lab/weights@1', model: small, params: packed, step: 0 };
    const back = paramsFromCheckpoint(ckpt);
    expect([...back.keys()]).toEqual([...params.keys()]);
    for (const [name, v] of params) expect(back.get(name)?.arraySync()).toEqual(v.arraySync());
    tf.dispose([...params.values(), ...back.values()]);
  });

  it('round-trips a tied model, and refuses untied weights under tied args and tied under untied', async () => {
    const tied: ModelArgs = { ...small, tieEmbeddings: true };
    const params = initParams(tied, 6);
    const packed = await packParams(params);
    const back = paramsFromCheckpoint({ model: tied, params: packed });
    expect([...back.keys()]).toEqual([...params.keys()]);
    expect(back.has('head.w')).toBe(false);
    for (const [name, v] of params) expect(back.get(name)?.arraySync()).toEqual(v.arraySync());
    expect(() => paramsFromCheckpoint({ model: small, params: packed })).toThrow(/missing parameter head\.w/);
    const untied = initParams(small, 6);
    const withHead = await packParams(untied);
    expect(() => paramsFromCheckpoint({ model: tied, params: withHead })).toThrow(
      /holds head\.w, which a model with its args has not/,
    );
    tf.dispose([...params.values(), ...back.values(), ...untied.values()]);
  });

  it('rejects a checkpoint whose shapes do not match its model args', async () => {
    const params = initParams(small, 5);
    const packed = await packParams(params);
    const wrong = { model: { ...small, dMlp: 64 }, params: packed };
    expect(() => paramsFromCheckpoint(wrong)).toThrow(/h0\.mlp\.w1 has shape/);
    tf.dispose([...params.values()]);
  });

  it('refuses a LoRA version that holds more than adapters, and leaks no tensor doing so', async () => {
    const params = initParams(small, 5);
    const packed = await packParams(params);
    const before = tf.memory().numTensors;
    expect(() => adaptersFromCheckpoint({ params: packed, lora: DEFAULT_LORA })).toThrow(
      /LoRA checkpoint holds \S+, which is no adapter/,
    );
    expect(tf.memory().numTensors).toBe(before); // it unpacked the tensors before the name check
    tf.dispose([...params.values()]);
  });

  it('rejects an entry that points past the end of the buffer, or a name twice, making no tensor', () => {
    const entry = (name: string, offset: number) => ({ name, shape: [2], dtype: 'float32' as const, offset });
    const before = tf.memory().numTensors;
    // The first entry is fine: it was made before the second was checked, and leaked.
    const outside = { entries: [entry('a', 0), entry('b', 3)], data: new ArrayBuffer(16) };
    expect(() => unpackTensors(outside)).toThrow(/b lies outside the buffer/);
    const twice = { entries: [entry('a', 0), entry('a', 2)], data: new ArrayBuffer(16) };
    expect(() => unpackTensors(twice)).toThrow(/a appears twice/);
    expect(tf.memory().numTensors).toBe(before);
  });
});
