import { errorMessage } from '../errors';

/** tfjs backends this app can train on, best first (DESIGN §2). */
export type BackendName = 'webgpu' | 'wasm' | 'webgl' | 'cpu';

export const BACKEND_ORDER: readonly BackendName[] = ['webgpu', 'wasm', 'webgl', 'cpu'];

export function isBackendName(s: string): s is BackendName {
  return (BACKEND_ORDER as readonly string[]).includes(s);
}

/** Which backend the trainer runs on, and why it is not a better one. */
export interface BackendReport {
  /** The backend the trainer actually runs on. */
  backend: BackendName;
  /** WebGPU adapter description (vendor, architecture, device), or null when none was found. */
  adapter: string | null;
  /** Each better backend that was tried and failed, with the reason, in the order tried. */
  fallbacks: { backend: BackendName; reason: string }[];
  /** Milliseconds spent selecting and initialising the backend. */
  initMs: number;
}

/**
 * Initialises one backend. Resolves to the WebGPU adapter description (or null) when it is
 * usable, throws an Error whose message says why when it is not.
 */
export type BackendInit = (name: BackendName) => Promise<string | null>;

/**
 * Tries `order` in turn and returns the first backend whose `init` succeeds, recording the
 * reason each earlier one failed. Throws only when every backend fails.
 */
export async function selectBackend(
  order: readonly BackendName[],
  init: BackendInit,
): Promise<BackendReport> {
  const t0 = performance.now();
  const fallbacks: BackendReport['fallbacks'] = [];
  let adapter: string | null = null;
  for (const backend of order) {
    try {
      const described = await init(backend);
      adapter ??= described;
      return { backend, adapter, fallbacks, initMs: performance.now() - t0 };
    } catch (err) {
      fallbacks.push({ backend, reason: errorMessage(err) });
    }
  }
  throw new Error(
    `no tfjs backend could start: ${fallbacks.map((f) => `${f.backend}: ${f.reason}`).join('; ')}`,
  );
}

/**
 * True for a WebGPU adapter that computes on the CPU (SwiftShader, llvmpipe, or one the browser
 * flags as a fallback). The trainer's choice goes by measurement; this is a note beside it.
 */
export function isSoftwareAdapter(info: {
  isFallbackAdapter?: boolean;
  vendor?: string;
  architecture?: string;
  device?: string;
  description?: string;
}): boolean {
  if (info.isFallbackAdapter) return true;
  const text = [info.vendor, info.architecture, info.device, info.description].join(' ');
  return /swiftshader|llvmpipe|lavapipe|software rasterizer/i.test(text);
}

/** Formats a WebGPU adapter's info as one line, e.g. "google swiftshader (SwiftShader Device)". */
export function describeAdapter(info: {
  vendor?: string;
  architecture?: string;
  device?: string;
  description?: string;
}): string {
  const main = [info.vendor, info.architecture].filter(Boolean).join(' ');
  const extra = [info.device, info.description].filter(Boolean).join(', ');
  return [main || 'unknown adapter', extra ? `(${extra})` : ''].filter(Boolean).join(' ');
}
