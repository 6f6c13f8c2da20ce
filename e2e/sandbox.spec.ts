import { expect, test, type JSHandle, type Page } from '@playwright/test';
import { HOST_ACCESS_CASES } from '../src/lib/sandbox/corpus';
import { labHandle, untilLabExposed, type Lab } from './support/lab';
import { workerMemoryBytes } from './support/memory';
import { crashWorker, keepWorkers } from './support/page';

/** A handle on the page's sandbox worker API (comlink proxy). */
async function sandboxApi(page: Page): Promise<JSHandle<Lab['sandbox']['bridge']['api']>> {
  const lab = await labHandle(page);
  return lab.evaluateHandle((l) => l.sandbox.bridge.api);
}

/**
 * Opens the page on its Sandbox view, with the debug hook and a short WebContainer boot timeout
 * (closed network here).
 */
async function open(page: Page): Promise<void> {
  await page.goto('./?debug&wcTimeout=3000#sandbox');
  await untilLabExposed(page);
  await expect(page.getByTestId('view-sandbox')).toBeVisible();
}

test('the sandbox contract holds for QuickJS in a real browser worker', async ({ page }) => {
  await open(page);
  const outcomes = await (await sandboxApi(page)).evaluate((api) => api.contract('quickjs'));
  expect(outcomes.length).toBeGreaterThan(20);
  const broken = outcomes.filter((o) => o.problem !== null);
  expect(broken, JSON.stringify(broken, null, 1)).toEqual([]);
});

test('soak: 10 000 runs in one worker, none wrong, worker memory growth under 10 MB', async ({ page }) => {
  test.setTimeout(300_000);
  await open(page);
  const api = await sandboxApi(page);
  await api.evaluate((a) => a.soak(500)); // load and warm up QuickJS before the baseline
  const before = await workerMemoryBytes(page, 'sandbox.worker');
  const report = await api.evaluate((a) => a.soak(10_000));
  const after = await workerMemoryBytes(page, 'sandbox.worker');
  console.log(`soak: ${JSON.stringify(report)}; worker JS memory ${before} -> ${after} bytes`);
  expect(report.runs).toBe(10_000);
  expect(report.wrong, JSON.stringify(report)).toBe(0);
  expect(report.wasmGrowthMb).toBeLessThan(10);
  if (before === null || after === null) throw new Error('this Chromium cannot measure worker memory');
  expect((after - before) / 2 ** 20).toBeLessThan(10);
});

test('the sandbox panel runs a program, reports a broken one, and runs the next', async ({ page }) => {
  await open(page);
  await page.getByTestId('sandbox-choice').selectOption('quickjs');
  await page.getByTestId('sandbox-code').fill('const f = (x) => { console.log("in", x); return x * x; }');
  await page.getByTestId('sandbox-inputs').fill('[2, 3]');
  await page.getByTestId('sandbox-run').click();
  await expect(page.getByTestId('sandbox-outputs')).toHaveText('[4,9]');
  await expect(page.getByTestId('sandbox-stdout')).toHaveText('in 2\nin 3');
  await expect(page.getByTestId('sandbox-ran-on')).toHaveText('QuickJS');
  await expect(page.getByTestId('sandbox-time')).toHaveText(/^\d+\.\d\d ms$/);
  await expect(page.getByTestId('sandbox-said')).toHaveText('Ran on QuickJS: ok, 2 outputs.');
  // The same program and inputs again: the result cache answers, and the panel says so.
  await page.getByTestId('sandbox-run').click();
  await expect(page.getByTestId('sandbox-time')).toHaveText('from the result cache');

  await page.getByTestId('sandbox-code').fill('const f = (x) => { while (true) {} }');
  await page.getByTestId('sandbox-run').focus();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('sandbox-kind')).toHaveText('timeout');
  await expect(page.getByTestId('sandbox-outputs')).toHaveCount(0);
  await expect(page.getByTestId('sandbox-said')).toHaveText('Ran on QuickJS: timeout.');
  // Run disabled itself while the program ran: the keyboard focus came back to it.
  await expect(page.getByTestId('sandbox-run')).toBeFocused();

  // What a failing program printed comes back with its error.
  await page.getByTestId('sandbox-code').fill('function f(x) { console.log("hi", x); }');
  await page.getByTestId('sandbox-inputs').fill('[0]');
  await page.getByTestId('sandbox-run').click();
  await expect(page.getByTestId('sandbox-kind')).toHaveText('output');
  await expect(page.getByTestId('sandbox-stdout')).toHaveText('hi 0');

  // Bad inputs: the error, and nothing left of the last result beside it.
  await page.getByTestId('sandbox-inputs').fill('[1,');
  await page.getByTestId('sandbox-run').click();
  await expect(page.getByTestId('sandbox-error')).toContainText('inputs are not valid JSON');
  await expect(page.getByTestId('sandbox-kind')).toHaveCount(0);

  await page.getByTestId('sandbox-code').fill('const f = (x) => x - 1');
  await page.getByTestId('sandbox-inputs').fill('[10]');
  await page.getByTestId('sandbox-run').click();
  await expect(page.getByTestId('sandbox-outputs')).toHaveText('[9]');
});

test('a sandbox worker that dies during a run ends the run with a message, and the next run gets a new worker', async ({
  page,
}) => {
  // QuickJS's wasm is held back, so the first run is still waiting on its worker when it dies.
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  await keepWorkers(page);
  await page.route('**/emscripten-module-*.wasm', async (route) => {
    await held;
    await route.continue();
  });
  await open(page);
  await page.getByTestId('sandbox-choice').selectOption('quickjs');
  await page.getByTestId('sandbox-code').fill('const f = (x) => x + 1');
  await page.getByTestId('sandbox-inputs').fill('[1]');
  await page.getByTestId('sandbox-run').click();
  await expect(page.getByTestId('sandbox-run')).toBeDisabled();
  await crashWorker(page, 'sandbox', 'injected crash');
  await expect(page.getByTestId('sandbox-error')).toContainText('sandbox worker crashed: injected crash');
  await expect(page.getByTestId('sandbox-run')).toBeEnabled();
  release();
  await page.getByTestId('sandbox-run').click();
  await expect(page.getByTestId('sandbox-outputs')).toHaveText('[2]');
  await expect(page.getByTestId('sandbox-error')).toHaveCount(0);
});

test('WebContainer: contract when it boots, otherwise a clear fallback to QuickJS', async ({ page }) => {
  await open(page);
  const status = page.getByTestId('webcontainer-status');
  await expect(status).not.toHaveText(/idle|booting/, { timeout: 30_000 });
  const text = (await status.textContent()) ?? '';
  if (text.startsWith('unavailable')) {
    // Auto mode must still run the program, on QuickJS, and say why.
    await page.getByTestId('sandbox-choice').selectOption('auto');
    await page.getByTestId('sandbox-run').click();
    await expect(page.getByTestId('sandbox-ran-on')).toHaveText('QuickJS');
    await expect(page.getByTestId('sandbox-notice')).toContainText('WebContainer is unavailable');
    console.log(`WebContainer contract skipped: ${text}`);
    test.skip(true, `WebContainer did not boot: ${text}`);
  }
  const outcomes = await (await sandboxApi(page)).evaluate((api) => api.contract('webcontainer'));
  const core = outcomes.filter((o) => !HOST_ACCESS_CASES.has(o.name));
  expect(core.filter((o) => o.problem !== null)).toEqual([]);
});
