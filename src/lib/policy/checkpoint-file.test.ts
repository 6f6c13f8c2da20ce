import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkpointFromText, checkpointToText } from './checkpoint-file';
import { DEFAULT_MODEL_ARGS, type ModelArgs } from './config';
import { initParams } from './model';
import { DEFAULT_LORA } from './lora';
import { packParams, paramsFromCheckpoint, type Checkpoint } from './weights';

const small: ModelArgs = { ...DEFAULT_MODEL_ARGS, contextLength: 8, dModel: 16, dMlp: 32 };

beforeAll(async () => {
  await tf.setBackend('cpu');
});

async function checkpoint(): Promise<Checkpoint> {
  const params = initParams(small, 3);
  const packed = await packParams(params);
  tf.dispose([...params.values()]);
  return { format: 'sandbox-rl-lab/weights@1', model: small, params: packed, step: 12 };
}

describe('a checkpoint as a file', () => {
  it('round-trips every float bit for bit, with its model and step', async () => {
    const ckpt = await checkpoint();
    const back = checkpointFromText(checkpointToText(ckpt), 'base.json');
    expect(back.model).toEqual(small);
    expect(back.step).toBe(12);
    expect(new Float32Array(back.params.data)).toEqual(new Float32Array(ckpt.params.data));
    const params = paramsFromCheckpoint(back);
    expect(params.size).toBe(ckpt.params.entries.length);
    tf.dispose([...params.values()]);
  });

  it('refuses a LoRA checkpoint, which holds adapters only', async () => {
    const ckpt = { ...(await checkpoint()), lora: DEFAULT_LORA };
    expect(() => checkpointToText(ckpt)).toThrow(/adapters only/);
  });

  it('names the file and the fault for text that is not a weights file', async () => {
    const good = JSON.parse(checkpointToText(await checkpoint())) as Record<string, unknown>;
    const bad = (o: Record<string, unknown>) => () => checkpointFromText(JSON.stringify(o), 'b.json');
    expect(() => checkpointFromText('{', 'b.json')).toThrow(/b\.json is not JSON/);
    expect(bad({ ...good, format: 'other' })).toThrow(/b\.json is not a weights file/);
    expect(bad({ ...good, model: null })).toThrow(/names no model/);
    expect(bad({ ...good, entries: undefined })).toThrow(/has no tensors/);
    expect(bad({ ...good, data: '###' })).toThrow(/not base64/);
    expect(bad({ ...good, data: btoa('abc') })).toThrow(/whole float32/);
    // Entries that do not fit the model are caught when the parameters are made.
    const cut = checkpointFromText(JSON.stringify({ ...good, data: btoa('abcd') }), 'b.json');
    expect(() => paramsFromCheckpoint(cut)).toThrow(/outside the buffer|missing/);
  });
});
