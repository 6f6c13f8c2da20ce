import { expect, test } from '@playwright/test';
import { metric, openReady, trainSteps } from './support/page';

test('without WebGPU the page reports the fallback backend and why, and still trains', async ({ page }) => {
  await openReady(page);
  const backend = await page.getByTestId('backend').textContent();
  expect(['wasm', 'webgl', 'cpu']).toContain(backend);
  // One line beside the backend badge; the reasons open below it.
  const fallback = page.getByTestId('fallback');
  await expect(fallback).toBeVisible();
  await expect(fallback.locator('summary')).toHaveText(/^passed over: webgpu/);
  const line = await fallback.boundingBox();
  expect(line?.height ?? Infinity).toBeLessThan(30);
  await expect(page.getByTestId('fallback-reason').first()).toBeHidden();
  await fallback.locator('summary').click();
  await expect(page.getByTestId('fallback-reason').first()).toContainText(/WebGPU|adapter/i);
  // wasm was measured alone (WebGPU never started): its figure is on the badge.
  if (backend === 'wasm')
    await expect(page.getByTestId('backend-timing')).toHaveText(/^wasm [\d.]+ ms \/ step$/);
  await trainSteps(page, 1);
  expect(Number.isFinite(await metric(page, 'loss'))).toBe(true);
  expect(await metric(page, 'weights-moved')).toBeGreaterThan(0);
});
