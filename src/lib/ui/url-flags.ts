import { isBackendName, type BackendName } from '../policy/backend';

/**
 * Backends forced by the URL: `?backend=wasm` (only that one) or `?backends=wasm,cpu` (in that
 * order), unmeasured. Returns undefined when the URL names none (the trainer then measures its
 * backends and takes the fastest), and throws on a name that is no backend.
 */
export function backendsFromUrl(search: string): BackendName[] | undefined {
  const params = new URLSearchParams(search);
  const raw = params.get('backends') ?? params.get('backend');
  if (!raw) return undefined;
  const names = raw.split(',').map((s) => s.trim());
  for (const n of names) {
    if (!isBackendName(n))
      throw new Error(`unknown backend "${n}" in the URL (use webgpu, wasm, webgl or cpu)`);
  }
  return names as BackendName[];
}
