import { expect, test } from '@playwright/test';
import { isSoftwareAdapter } from '../src/lib/policy/backend.ts';
import { MEASURE_PLAN } from '../src/lib/policy/backend-choice.ts';
import { DB_NAME } from '../src/lib/storage/db.ts';
import { TRAINER_CHECK_RUN_ID } from '../src/lib/storage/weights-store.ts';
import { onLab } from './support/lab';
import { keepWorkers, metric, openReady, terminateWorker, trainSteps } from './support/page';
import { openView } from './support/views';

test('the trainer worker runs on webgpu and a step moves the weights with a finite loss', async ({
  page,
}) => {
  await openReady(page, '?backend=webgpu');
  await expect(page.getByTestId('backend')).toHaveText('webgpu');
  await expect(page.getByTestId('adapter')).not.toHaveText('none');
  expect(await metric(page, 'weights-moved')).toBe(0);
  await trainSteps(page, 1);
  const loss = await metric(page, 'loss');
  expect(Number.isFinite(loss)).toBe(true);
  expect(await metric(page, 'step-ms')).toBeGreaterThan(0);
  // A zero norm with moving weights once exposed a WebGPU addN bug on scalars: keep it checked.
  expect(await metric(page, 'grad-norm')).toBeGreaterThan(0);
  expect(await metric(page, 'weights-moved')).toBeGreaterThan(0);
  await expect(page.getByTestId('event-count')).not.toHaveText('0');
});

test('training on webgpu lowers the loss below its own first step', async ({ page }) => {
  await openReady(page, '?backend=webgpu');
  await trainSteps(page, 5);
  expect(await metric(page, 'steps')).toBe(5);
  expect(await metric(page, 'loss')).toBeLessThan((await metric(page, 'first-loss')) * 0.8);
  await expect(page.getByTestId('trainer-chart')).not.toContainText('no data yet');
});

test('by default the trainer measures its backends and trains on the fastest; a software WebGPU adapter measures slower than wasm', async ({
  page,
}) => {
  await page.goto('./');
  const adapter = await page.evaluate(async () => {
    const a = await navigator.gpu?.requestAdapter();
    if (!a) return null;
    // GPUAdapterInfo's fields are prototype getters: copy them one by one.
    const { vendor, architecture, device, description, isFallbackAdapter } = a.info;
    return { vendor, architecture, device, description, isFallbackAdapter };
  });
  await openReady(page, '?debug');
  const { info, measuredEvents } = await onLab(page, (l) => ({
    info: l.trainer.info,
    measuredEvents: l.trainer.events.filter((e) => e.kind === 'init' && e.meta?.measured !== undefined),
  }));
  const choice = info?.choice;
  if (!info || !choice)
    throw new Error(`the default page chose no backend by measurement: ${JSON.stringify(info)}`);
  expect(choice.timings.map((t) => t.backend)).toEqual(adapter ? ['wasm', 'webgpu'] : ['wasm']);
  // The backend used is the one with the fewest ms per step; the badge shows every figure.
  const figures = choice.timings.filter((t) => t.msPerStep !== null);
  const fastest = figures.reduce((a, b) => ((b.msPerStep ?? Infinity) < (a.msPerStep ?? Infinity) ? b : a));
  expect(info.backend).toBe(fastest.backend);
  await expect(page.getByTestId('backend')).toHaveText(info.backend);
  await expect(page.getByTestId('backend-timing')).toHaveText(choice.label);
  expect(choice.label).toMatch(
    new RegExp(`^${info.backend} [\\d.]+ ms( · \\w+ [\\d.]+ ms)* / step( · .+)?$`),
  );
  await expect(page.locator('.badge', { has: page.getByTestId('backend') })).toHaveAttribute(
    'title',
    /^Chosen by measurement/,
  );
  // Each backend measured is a timeline event with its figure.
  expect(measuredEvents.map((e) => e.meta?.measured)).toEqual(choice.timings.map((t) => t.backend));
  // About 3 s in all: the cap, plus one step past it at most and the abort's wait.
  expect(choice.ms).toBeLessThan(MEASURE_PLAN.budgetMs + MEASURE_PLAN.abortGraceMs + 3000);
  if (!adapter || isSoftwareAdapter(adapter)) {
    // No GPU: wasm measured faster, and WebGPU was passed over for that (its name is only a note).
    expect(info.backend).toBe('wasm');
    const webgpu = choice.timings.find((t) => t.backend === 'webgpu');
    const wasmMs = choice.timings.find((t) => t.backend === 'wasm')?.msPerStep ?? NaN;
    if (webgpu) {
      // With no step timed: its warm-up was stopped at the cap, or not run since its kernels'
      // compile time alone would pass it.
      expect(
        webgpu.msPerStep === null
          ? (webgpu.warmupAtLeastMs ?? webgpu.cutAfterMs ?? 0) > wasmMs
          : webgpu.msPerStep > wasmMs,
      ).toBe(true);
      await expect(page.getByTestId('fallback-reason').first()).toContainText(
        /^measured slower: .* runs on the CPU, not a GPU$/,
      );
    }
  }
  // The trainer trains on the backend chosen.
  await trainSteps(page, 1);
  expect(Number.isFinite(await metric(page, 'loss'))).toBe(true);
});

test('weights saved to IndexedDB survive a reload and load back exactly', async ({ page }) => {
  await openReady(page);
  await openView(page, 'trainer');
  // Load before any save says so beside the buttons; the page shows no error.
  await page.getByTestId('load').click();
  await expect(page.getByTestId('store-note')).toHaveText(/^Nothing saved yet/);
  await expect(page.getByTestId('error')).toHaveCount(0);
  await expect(page.getByTestId('loaded-version')).toHaveText('—');
  // A bad step count says what is wrong (and Train waits for a good one).
  await page.getByTestId('train-steps').fill('2.5');
  await expect(page.getByTestId('train-steps-error')).toHaveText(
    'steps must be a whole number from 1 to 10 000, got 2.5',
  );
  await expect(page.getByTestId('train-n')).toBeDisabled();
  await page.getByTestId('train-steps').fill('20');
  await expect(page.getByTestId('train-steps-error')).toHaveCount(0);
  await trainSteps(page, 1);
  // By keyboard: Save disables itself while it writes, and the focus comes back to it after.
  await page.getByTestId('save').focus();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('saved-version')).not.toHaveText('—');
  await expect(page.getByTestId('save')).toBeFocused();
  await expect(page.getByTestId('store-note')).toHaveCount(0);
  const saved = await page.getByTestId('fingerprint').textContent();
  const version = await page.getByTestId('saved-version').textContent();

  await page.reload();
  await openReady(page);
  await openView(page, 'trainer');
  // A fresh trainer starts from the seed's initial weights, not the trained ones.
  await expect(page.getByTestId('fingerprint')).not.toHaveText(saved ?? '');
  await page.getByTestId('load').click();
  await expect(page.getByTestId('loaded-version')).toHaveText(version ?? '');
  await expect(page.getByTestId('fingerprint')).toHaveText(saved ?? '');
  // The saved weights are a check of the worker, not a training run: the run list does not show them.
  await expect(page.getByTestId('run-list')).toHaveCount(0);
  // With no run list to delete them from, saving keeps only the newest 3 versions.
  for (let i = 0; i < 4; i++) {
    const before = await page.getByTestId('saved-version').textContent();
    await page.getByTestId('save').click();
    await expect(page.getByTestId('saved-version')).not.toHaveText(before ?? '');
  }
  const newest = Number(await page.getByTestId('saved-version').textContent());
  const stored = await page.evaluate(
    ([db, run]) =>
      new Promise<number[]>((resolve, reject) => {
        const open = indexedDB.open(db);
        open.onerror = () => reject(new Error('the database did not open'));
        open.onsuccess = () => {
          const keys = open.result
            .transaction('weights')
            .objectStore('weights')
            .getAllKeys(IDBKeyRange.bound([run, -Infinity], [run, Infinity]));
          keys.onsuccess = () => {
            resolve(keys.result.map((k) => (k as [string, number])[1]));
            open.result.close();
          };
        };
      }),
    [DB_NAME, TRAINER_CHECK_RUN_ID] as const,
  );
  expect(stored).toEqual([newest - 2, newest - 1, newest]);
});

test('a trainer worker gone without a word: Stop waits for its step, Stop now ends at once and starts a new worker', async ({
  page,
}) => {
  await keepWorkers(page);
  await openReady(page, '?backend=wasm');
  await openView(page, 'trainer');
  await page.getByTestId('train-steps').fill('5000');
  await page.getByTestId('train-n').click();
  await expect(page.getByTestId('steps')).not.toHaveText('0', { timeout: 60_000 });
  await terminateWorker(page, 'trainer');
  await page.getByTestId('train-stop').click();
  // The step in progress never comes back: the panel still trains, and Stop becomes Stop now.
  await expect(page.getByTestId('train-stop')).toHaveText('Stop now');
  await expect(page.getByTestId('trainer-status')).toHaveText('training');
  await page.getByTestId('train-stop').click();
  await expect(page.getByTestId('trainer-notice')).toContainText('Stopped at once', { timeout: 120_000 });
  await expect(page.getByTestId('trainer-status')).toHaveText('ready');
  await expect(page.getByTestId('train-stop')).toHaveText('Stop');
  // The new worker trains.
  await trainSteps(page, 1);
});
