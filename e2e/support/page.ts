import { expect, type Page } from '@playwright/test';

/** Opens the page (with optional query) and waits until the trainer worker is ready or failed. */
export async function openReady(page: Page, query = ''): Promise<void> {
  await page.goto(`./${query}`);
  await expect(page.getByTestId('trainer-status')).toHaveText(/ready|error/, { timeout: 120_000 });
  const error = page.getByTestId('error');
  if (await error.count()) throw new Error(`page reports an error: ${await error.textContent()}`);
}

/** Reads a numeric metric shown in the page. */
export async function metric(page: Page, testid: string): Promise<number> {
  return Number.parseFloat((await page.getByTestId(testid).textContent()) ?? 'NaN');
}

/** Clicks "Train N steps" and waits until the trainer is ready again. */
export async function trainSteps(page: Page, button: 'train-1' | 'train-20'): Promise<void> {
  await page.getByTestId(button).click();
  await expect(page.getByTestId('trainer-status')).toHaveText('training');
  await expect(page.getByTestId('trainer-status')).toHaveText('ready', { timeout: 170_000 });
}
