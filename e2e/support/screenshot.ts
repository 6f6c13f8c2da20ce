// Regenerates the README screenshot: `npx vite build && npx tsx e2e/support/screenshot.ts`
// (serves dist/ itself, runs the asynchronous preset for a while with 3 rollout workers, unbounded
// staleness and the trainer on wasm, writes e2e/screenshot.png: the first screen at 1440 × 900).
import { chromium } from 'playwright-core';
import { preview } from 'vite';
import { BASE_ARGS, WEBGPU_ARGS, ensureChromium } from './chromium.ts';

const server = await preview({ logLevel: 'silent', preview: { host: '127.0.0.1', port: 4191 } });
const browser = await chromium.launch({
  executablePath: ensureChromium(),
  args: [...BASE_ARGS, ...WEBGPU_ARGS],
});
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  const base = server.resolvedUrls?.local[0] ?? 'http://127.0.0.1:4191/';
  await page.goto(`${base}?backend=wasm&wcTimeout=1#advanced`);
  await page
    .getByTestId('trainer-status')
    .filter({ hasText: 'ready' })
    .waitFor({ state: 'attached', timeout: 180_000 });
  await page.getByTestId('run-workers').fill('3');
  await page.getByTestId('run-eta').selectOption({ label: 'unbounded' });
  await page.getByTestId('nav-train').click();
  await page.getByTestId('train').click();
  await page
    .getByTestId('flow-interrupts')
    .filter({ hasNotText: /^(0|–)$/ })
    .waitFor({ timeout: 120_000 });
  await page.waitForTimeout(8000);
  await page.mouse.move(0, 0);
  await page.screenshot({ path: 'e2e/screenshot.png', fullPage: false });
  await page.getByTestId('stop').click();
} finally {
  await browser.close();
  await server.close();
}
