import * as tf from '@tensorflow/tfjs';
import wasmPlain from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm?url';
import wasmSimd from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm?url';
import wasmThreaded from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-threaded-simd.wasm?url';
import {
  describeAdapter,
  isSoftwareAdapter,
  type BackendInit,
  type BackendName,
} from '../src/lib/policy/backend';

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

/**
 * Initialises one tfjs backend inside a worker (see `selectBackend`). A software WebGPU adapter
 * (no GPU: SwiftShader) is refused unless `allowSoftwareWebGPU`, so that the default order falls
 * through to wasm, which trains several times faster on the same CPU; a page that asks for
 * `?backend=webgpu` gets it anyway.
 */
export const backendInit =
  ({ allowSoftwareWebGPU }: { allowSoftwareWebGPU: boolean }): BackendInit =>
  (name) =>
    initBackend(name, allowSoftwareWebGPU);

/** Initialises one tfjs backend inside a worker; with `allowSoftwareWebGPU` false, refuses a CPU-backed WebGPU adapter. */
export async function initBackend(name: BackendName, allowSoftwareWebGPU = true): Promise<string | null> {
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
      const description = describeAdapter(adapter.info);
      if (!allowSoftwareWebGPU && isSoftwareAdapter(adapter.info))
        throw new Error(
          `the WebGPU adapter (${description}) runs on the CPU, not a GPU: wasm trains faster here (?backend=webgpu uses it anyway)`,
        );
      await import('@tensorflow/tfjs-backend-webgpu');
      await activate('webgpu');
      return description;
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
      return null;
    }
    case 'webgl':
      if (typeof OffscreenCanvas === 'undefined')
        throw new Error('no OffscreenCanvas in this worker, so no WebGL');
      await activate('webgl');
      return null;
    case 'cpu':
      await activate('cpu');
      return null;
  }
}
