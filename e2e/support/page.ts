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

/** Trains `steps` steps from the page's controls and waits until they are done and the trainer is ready. */
export async function trainSteps(page: Page, steps: number): Promise<void> {
  const before = await metric(page, 'steps');
  if (steps === 1) {
    await page.getByTestId('train-1').click();
  } else {
    await page.getByTestId('train-steps').fill(String(steps));
    await page.getByTestId('train-n').click();
  }
  await expect(page.getByTestId('steps')).toHaveText(String(before + steps), { timeout: 170_000 });
  await expect(page.getByTestId('trainer-status')).toHaveText('ready');
}

/** Asserts that the page does not scroll sideways: no content is wider than the window. */
export async function expectNoSidewaysScroll(page: Page): Promise<void> {
  const [scroll, client] = await page.evaluate(() => [
    document.documentElement.scrollWidth,
    document.documentElement.clientWidth,
  ]);
  expect(scroll, `the page is ${scroll} px wide in a window of ${client} px`).toBeLessThanOrEqual(
    client ?? 0,
  );
}
