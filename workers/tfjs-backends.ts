import * as tf from '@tensorflow/tfjs';
import wasmPlain from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm?url';
import wasmSimd from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm?url';
import wasmThreaded from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-threaded-simd.wasm?url';
import { describeAdapter, isSoftwareAdapter, type BackendName } from '../src/lib/policy/backend';

const NO_ADAPTER: StartedBackend = { adapter: null, software: false };

async function activate(name: BackendName): Promise<void> {
  const ok = await tf.setBackend(name);
  if (!ok) throw new Error(`tf.setBackend('${name}') could not initialise the backend`);
  await tf.ready();
  // A backend that initialises but cannot compute is no backend: run one op and read it back.
  const probe = tf.tidy(() => tf.matMul(tf.ones([2, 2]), tf.ones([2, 2])).sum());
  const value = (await probe.data())[0];
  probe.dispose();
  if (value !== 8) throw new Error(`${name} backend computed a wrong value (${value}) on a probe`);
}

/** A backend started in this worker: its WebGPU adapter, and whether that adapter runs on the CPU. */
export interface StartedBackend {
  /** WebGPU adapter description, or null for the other backends. */
  adapter: string | null;
  /** A WebGPU adapter with no GPU behind it (SwiftShader, llvmpipe): a note, not a reason to refuse it. */
  software: boolean;
}

/** Initialises one tfjs backend inside a worker (the `BackendInit` of `selectBackend`). */
export async function initBackend(name: BackendName): Promise<string | null> {
  return (await startBackend(name)).adapter;
}

/** Initialises one tfjs backend inside a worker, and makes it the active one. */
export async function startBackend(name: BackendName): Promise<StartedBackend> {
  switch (name) {
    case 'webgpu': {
      if (!navigator.gpu) throw new Error('this browser exposes no WebGPU (navigator.gpu is undefined)');
      const adapter = await navigator.gpu.requestAdapter();
      if (!adapter) {
        throw new Error(
          'navigator.gpu.requestAdapter() returned null: no usable WebGPU adapter ' +
            '(no GPU, or WebGPU disabled; headless Chromium needs --enable-unsafe-webgpu)',
        );
      }
      await import('@tensorflow/tfjs-backend-webgpu');
      await activate('webgpu');
      return { adapter: describeAdapter(adapter.info), software: isSoftwareAdapter(adapter.info) };
    }
    case 'wasm': {
      const wasm = await import('@tensorflow/tfjs-backend-wasm');
      // The threaded build's pthread workers fail to start inside a module worker bundled by
      // Vite ("e is not defined"); the single-threaded SIMD build is what runs reliably.
      tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
      wasm.setWasmPaths({
        'tfjs-backend-wasm.wasm': wasmPlain,
        'tfjs-backend-wasm-simd.wasm': wasmSimd,
        'tfjs-backend-wasm-threaded-simd.wasm': wasmThreaded,
      });
      await activate('wasm');
      return NO_ADAPTER;
    }
    case 'webgl':
      if (typeof OffscreenCanvas === 'undefined')
        throw new Error('no OffscreenCanvas in this worker, so no WebGL');
      await activate('webgl');
      return NO_ADAPTER;
    case 'cpu':
      await activate('cpu');
      return NO_ADAPTER;
  }
}

/** Destroys the WebGPU backend's device: work in flight on it stops, and a read of it rejects. */
async function destroyWebGPUDevice(): Promise<void> {
  const { WebGPUBackend } = await import('@tensorflow/tfjs-backend-webgpu');
  const backend = tf.findBackend('webgpu');
  if (backend instanceof WebGPUBackend) backend.device.destroy();
}

/**
 * Stops a backend's work in flight, so that another backend can take over: WebGPU's device is
 * destroyed (the step waiting on it rejects). wasm and cpu compute synchronously: nothing to stop.
 */
export async function abortBackend(name: BackendName): Promise<void> {
  if (name === 'webgpu') await destroyWebGPUDevice();
}

/** Makes a backend started earlier the active one again. */
export async function useBackend(name: BackendName): Promise<void> {
  if (tf.getBackend() === name) return;
  if (!(await tf.setBackend(name))) throw new Error(`tf.setBackend('${name}') failed after measuring`);
  await tf.ready();
}

/**
 * Frees a backend that is not used (not the active one): its memory (the wasm heap, WebGPU's
 * buffers and device) is released and tfjs forgets it, so this worker cannot start it again.
 */
export async function releaseBackend(name: BackendName): Promise<void> {
  if (tf.getBackend() === name) throw new Error(`cannot release the active backend (${name})`);
  if (!tf.findBackendFactory(name)) return;
  if (name === 'webgpu') await destroyWebGPUDevice();
  tf.removeBackend(name);
}
