import { defineConfig } from '@playwright/test';
import { BASE_ARGS, WEBGPU_ARGS, findChromium } from './e2e/support/chromium.ts';

const executablePath = findChromium() ?? undefined;
const PORT = 4179;

export default defineConfig({
  testDir: 'e2e',
  testMatch: '**/*.spec.ts',
  timeout: 180_000,
  expect: { timeout: 60_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: [['list'], ['json', { outputFile: 'test-results/e2e.json' }]],
  // Playwright empties its outputDir on start: keep it apart from the unit report beside it.
  outputDir: 'test-results/e2e-artifacts',
  use: { baseURL: `http://127.0.0.1:${PORT}/`, trace: 'off' },
  webServer: {
    command: `npx vite preview --host 127.0.0.1 --port ${PORT} --strictPort`,
    url: `http://127.0.0.1:${PORT}/`,
    reuseExistingServer: false,
    timeout: 60_000,
  },
  projects: [
    {
      name: 'webgpu',
      testIgnore: '**/*.no-webgpu.spec.ts',
      use: { launchOptions: { executablePath, args: [...BASE_ARGS, ...WEBGPU_ARGS] } },
    },
    {
      name: 'no-webgpu',
      testMatch: '**/*.no-webgpu.spec.ts',
      use: { launchOptions: { executablePath, args: BASE_ARGS } },
    },
  ],
});
