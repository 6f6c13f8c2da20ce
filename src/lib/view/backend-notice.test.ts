import { describe, expect, it } from 'vitest';
import type { BackendChoice } from '../policy/backend-choice';
import { fallbackLine } from './backend-notice';

const choice = (backends: BackendChoice['backend'][]): BackendChoice => ({
  backend: 'wasm',
  timings: backends.map((backend) => ({
    backend,
    msPerStep: 10,
    warmupMs: 50,
    steps: 3,
    capMs: 1000,
    cutAfterMs: null,
    kernelCompileMs: null,
    warmupAtLeastMs: null,
    error: null,
  })),
  label: '',
  ms: 100,
});

describe('the line on the backends passed over', () => {
  it('says nothing when no backend was passed over', () => {
    expect(fallbackLine({ backend: 'webgpu', fallbacks: [], choice: null })).toBeNull();
  });

  it('names the backend run on and those passed over; one measured slower is a note, not a warning', () => {
    const line = fallbackLine({
      backend: 'wasm',
      fallbacks: [{ backend: 'webgpu', reason: 'measured slower: …' }],
      choice: choice(['webgpu', 'wasm']),
    });
    expect(line).toEqual({
      text: 'Trainer on wasm, the fastest measured · passed over: webgpu',
      lost: false,
    });
  });

  it('warns when a backend could not start', () => {
    const line = fallbackLine({
      backend: 'wasm',
      fallbacks: [{ backend: 'webgpu', reason: 'no adapter' }],
      choice: choice(['wasm']),
    });
    expect(line).toEqual({ text: 'Trainer on wasm, not a faster backend · passed over: webgpu', lost: true });
  });
});
