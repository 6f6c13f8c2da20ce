import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Plugin } from 'vite';
import { defineConfig } from 'vitest/config';
import { svelte } from '@sveltejs/vite-plugin-svelte';

/** Headers that make the page cross-origin isolated (SharedArrayBuffer, precise timers, WebContainer). */
const isolationHeaders = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

/**
 * Serves and emits `coi-serviceworker.js` from the `coi-serviceworker` package, so that a static
 * deployment of `dist/` (where response headers cannot be set) still becomes cross-origin
 * isolated: the service worker adds COOP/COEP to every response and reloads the page once.
 */
function coiServiceWorker(): Plugin {
  const require = createRequire(import.meta.url);
  const file = 'coi-serviceworker.js';
  const source = () => readFileSync(require.resolve('coi-serviceworker/coi-serviceworker.min.js'), 'utf8');
  return {
    name: 'coi-serviceworker',
    configureServer(server) {
      server.middlewares.use(`/${file}`, (_req, res) => {
        res.setHeader('Content-Type', 'text/javascript');
        res.end(source());
      });
    },
    generateBundle() {
      this.emitFile({ type: 'asset', fileName: file, source: source() });
    },
  };
}

export default defineConfig({
  base: './',
  plugins: [svelte(), coiServiceWorker()],
  server: { headers: isolationHeaders },
  preview: { headers: isolationHeaders },
  worker: { format: 'es' },
  build: { target: 'es2022', chunkSizeWarningLimit: 4096 },
  optimizeDeps: { exclude: ['quickjs-emscripten', '@jitl/quickjs-wasmfile-release-sync'] },
  test: {
    include: ['src/**/*.test.ts', 'workers/**/*.test.ts'],
    environment: 'node',
    testTimeout: 60_000,
    reporters: ['default', ['json', { outputFile: 'test-results/unit.json' }]],
  },
});
