import * as tf from '@tensorflow/tfjs';
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { BUILT_IN_BASES, isBuiltInBase, loadBuiltInBase } from './bases';
import { DEFAULT_MODEL_ARGS } from './config';
import { paramsFromCheckpoint } from './weights';

beforeAll(async () => {
  await tf.setBackend('cpu');
});
afterEach(() => vi.unstubAllGlobals());

/** A fetch that serves each base's file from the repository, as the page serves its assets. */
function serveFiles(status = 200) {
  vi.stubGlobal('fetch', async (url: string) => {
    const id = Object.keys(BUILT_IN_BASES).find((k) => url.endsWith(`/bases/${k}.json`));
    const text = id ? readFileSync(new URL(`./bases/${id}.json`, import.meta.url), 'utf8') : '';
    return new Response(text, { status: id ? status : 404 });
  });
}

describe('built-in bases', () => {
  it('each is a weights file of the page’s model, whose parameters load', async () => {
    serveFiles();
    for (const id of Object.keys(BUILT_IN_BASES)) {
      if (!isBuiltInBase(id)) throw new Error(id);
      const ckpt = await loadBuiltInBase(id);
      // The page's model; the copy base adds the pointer head.
      const pointer = id === 'tooluse-revise-copy' ? { pointerDim: 16 } : {};
      expect(ckpt.model).toEqual({ ...DEFAULT_MODEL_ARGS, ...pointer });
      const params = paramsFromCheckpoint(ckpt);
      const sum = tf.tidy(() => tf.addN([...params.values()].map((p) => p.abs().sum())).arraySync());
      expect(sum).toBeGreaterThan(0);
      tf.dispose([...params.values()]);
    }
  });

  it('names only its own bases, and says when one cannot be fetched', async () => {
    expect(isBuiltInBase('easy-half')).toBe(true);
    expect(isBuiltInBase('toString')).toBe(false);
    expect(isBuiltInBase(3)).toBe(false);
    serveFiles(503);
    await expect(loadBuiltInBase('easy-half')).rejects.toThrow(/easy-half could not be loaded \(HTTP 503\)/);
  });
});
