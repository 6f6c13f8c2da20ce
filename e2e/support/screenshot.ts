// Regenerates the README screenshot: `npx vite build && npx tsx e2e/support/screenshot.ts`
// (serves dist/ itself, trains a few steps on the default backend, writes e2e/screenshot.png).
import { chromium } from 'playwright-core';
import { preview } from 'vite';
import { BASE_ARGS, WEBGPU_ARGS, ensureChromium } from './chromium.ts';

const server = await preview({ logLevel: 'silent', preview: { host: '127.0.0.1', port: 4191 } });
const browser = await chromium.launch({
  executablePath: ensureChromium(),
  args: [...BASE_ARGS, ...WEBGPU_ARGS],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 820 } });
  await page.goto(server.resolvedUrls?.local[0] ?? 'http://127.0.0.1:4191/');
  await page.getByTestId('trainer-status').filter({ hasText: 'ready' }).waitFor({ timeout: 180_000 });
  await page.getByTestId('train-steps').fill('4');
  await page.getByTestId('train-n').click();
  await page.getByTestId('steps').filter({ hasText: '4' }).waitFor({ timeout: 300_000 });
  await page.getByTestId('trainer-status').filter({ hasText: 'ready' }).waitFor();
  await page.screenshot({ path: 'e2e/screenshot.png' });
} finally {
  await browser.close();
  await server.close();
}
