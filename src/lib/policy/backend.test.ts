import { describe, expect, it } from 'vitest';
import {
  BACKEND_ORDER,
  describeAdapter,
  isSoftwareAdapter,
  selectBackend,
  type BackendName,
} from './backend';

describe('selectBackend', () => {
  it('takes the first backend that starts and records why better ones did not', async () => {
    const tried: BackendName[] = [];
    const report = await selectBackend(BACKEND_ORDER, async (name) => {
      tried.push(name);
      if (name === 'webgpu') throw new Error('navigator.gpu.requestAdapter() returned null');
      if (name === 'wasm') throw new Error('wasm fetch failed');
      return null;
    });
    expect(report.backend).toBe('webgl');
    expect(tried).toEqual(['webgpu', 'wasm', 'webgl']);
    expect(report.fallbacks).toEqual([
      { backend: 'webgpu', reason: 'navigator.gpu.requestAdapter() returned null' },
      { backend: 'wasm', reason: 'wasm fetch failed' },
    ]);
  });

  it('reports the adapter of the backend chosen', async () => {
    const report = await selectBackend(['webgpu', 'cpu'], async (n) =>
      n === 'webgpu' ? 'google swiftshader' : null,
    );
    expect(report).toMatchObject({ backend: 'webgpu', adapter: 'google swiftshader', fallbacks: [] });
  });

  it('throws with every reason when nothing starts', async () => {
    await expect(
      selectBackend(['webgl', 'cpu'], async (n) => {
        throw new Error(`${n} broken`);
      }),
    ).rejects.toThrow('webgl: webgl broken; cpu: cpu broken');
  });

  it('describes adapters readably', () => {
    expect(describeAdapter({ vendor: 'google', architecture: 'swiftshader', description: '' })).toBe(
      'google swiftshader',
    );
    expect(describeAdapter({})).toBe('unknown adapter');
    expect(describeAdapter({ vendor: 'nvidia', device: 'H100' })).toBe('nvidia (H100)');
  });
});

describe('isSoftwareAdapter', () => {
  it('tells a CPU-backed WebGPU adapter from a GPU', () => {
    expect(isSoftwareAdapter({ vendor: 'google', architecture: 'swiftshader' })).toBe(true);
    expect(isSoftwareAdapter({ vendor: 'mesa', device: 'llvmpipe (LLVM 15.0.6, 256 bits)' })).toBe(true);
    expect(isSoftwareAdapter({ vendor: 'nvidia', architecture: 'hopper', isFallbackAdapter: true })).toBe(
      true,
    );
    expect(isSoftwareAdapter({ vendor: 'nvidia', architecture: 'hopper' })).toBe(false);
    expect(isSoftwareAdapter({ vendor: 'apple', architecture: 'metal-3', isFallbackAdapter: false })).toBe(
      false,
    );
  });
});
