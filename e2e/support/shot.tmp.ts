import { chromium } from 'playwright-core';
import { preview } from 'vite';
import { BASE_ARGS, WEBGPU_ARGS, ensureChromium } from './chromium.ts';

type W = {
  __lab: { run: { running: boolean; start(o: { maxIterations: number; evalEvery: number }): Promise<void> } };
};
const server = await preview({ logLevel: 'silent', preview: { host: '127.0.0.1', port: 4192 } });
const browser = await chromium.launch({
  executablePath: ensureChromium(),
  args: [...BASE_ARGS, ...WEBGPU_ARGS],
});
try {
  const width = Number(process.argv[2] ?? 1400);
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  await page.goto('http://127.0.0.1:4192/?debug&backend=wasm&wcTimeout=1');
  await page.getByTestId('trainer-status').filter({ hasText: 'ready' }).waitFor({ timeout: 180_000 });
  if (process.argv[3] === 'train') {
    await page.evaluate(() => (window as unknown as W).__lab.run.start({ maxIterations: 3, evalEvery: 0 }));
    await page.waitForFunction(() => !(window as unknown as W).__lab.run.running, null, { timeout: 120_000 });
    await page.reload();
    await page.getByTestId('trainer-status').filter({ hasText: 'ready' }).waitFor({ timeout: 180_000 });
  }
  await page.getByTestId('run-list').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `/tmp/runlist-${width}.png` });
  for (const b of await page.getByTestId('run-view').all()) {
    const box = await b.boundingBox();
    if (!box) continue;
    const hit = await page.evaluate(
      ([x, y]) =>
        document.elementFromPoint(x, y)?.getAttribute('data-testid') ??
        document.elementFromPoint(x, y)?.tagName,
      [box.x + box.width / 2, box.y + box.height / 2],
    );
    console.log('Show button hit:', hit);
  }
} finally {
  await browser.close();
  await server.close();
}
