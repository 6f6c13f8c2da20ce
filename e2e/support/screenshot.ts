// Regenerates the README screenshot: `npx vite build && npx tsx e2e/support/screenshot.ts`
// (serves dist/ itself, runs the asynchronous pipeline for a while with 3 rollout workers and the
// trainer on wasm, writes e2e/screenshot.png with the run panel and the live timeline).
import { chromium } from 'playwright-core';
import { preview } from 'vite';
import { BASE_ARGS, WEBGPU_ARGS, ensureChromium } from './chromium.ts';

const server = await preview({ logLevel: 'silent', preview: { host: '127.0.0.1', port: 4191 } });
const browser = await chromium.launch({
  executablePath: ensureChromium(),
  args: [...BASE_ARGS, ...WEBGPU_ARGS],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  await page.goto(`${server.resolvedUrls?.local[0] ?? 'http://127.0.0.1:4191/'}?backend=wasm&wcTimeout=1`);
  await page.getByTestId('trainer-status').filter({ hasText: 'ready' }).waitFor({ timeout: 180_000 });
  await page.getByTestId('run-workers').fill('3');
  await page.getByTestId('run-eta').selectOption({ label: 'unbounded' });
  await page.getByTestId('run-start').click();
  await page.getByTestId('pipe-interrupts').filter({ hasNotText: /^0$/ }).waitFor({ timeout: 120_000 });
  await page.waitForTimeout(8000);
  await page.evaluate(() => document.getElementById('pipeline-h')?.scrollIntoView());
  await page.screenshot({ path: 'e2e/screenshot.png', fullPage: false });
  await page.getByTestId('run-stop').click();
} finally {
  await browser.close();
  await server.close();
}
