import { expect, test } from '@playwright/test';
import { isSoftwareAdapter } from '../src/lib/policy/backend.ts';
import { DB_NAME } from '../src/lib/storage/db.ts';
import { TRAINER_CHECK_RUN_ID } from '../src/lib/storage/weights-store.ts';
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

test('by default the trainer takes WebGPU on a GPU, and wasm (saying why) on a software adapter', async ({
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
  await openReady(page);
  const software = !adapter || isSoftwareAdapter(adapter);
  if (software) {
    await expect(page.getByTestId('backend')).toHaveText('wasm');
    await expect(page.getByTestId('fallback-reason').first()).toContainText(/WebGPU/);
  } else {
    await expect(page.getByTestId('backend')).toHaveText('webgpu');
  }
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
