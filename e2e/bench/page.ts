import type { Browser, JSHandle, Page } from 'playwright-core';
import { labHandle, untilTrainerSettled, type Lab } from '../support/lab.ts';

/** A page of the app opened with `?debug`, and a handle on its `window.__lab`. */
export interface LabPage {
  page: Page;
  lab: JSHandle<Lab>;
}

/** Opens the app with `?debug` and `query`, and waits until the trainer is ready or failed. */
export async function openTrainer(browser: Browser, baseUrl: string, query = ''): Promise<LabPage> {
  const page = await browser.newPage();
  await page.goto(`${baseUrl}?debug${query ? `&${query}` : ''}`);
  await untilTrainerSettled(page, 180_000);
  return { page, lab: await labHandle(page) };
}

/** Runs `steps` steps through the page and returns the ms of each step taken. */
export async function trainAndTime({ page, lab }: LabPage, steps: number): Promise<number[]> {
  const before = await lab.evaluate((l) => l.trainer.history.length);
  await lab.evaluate((l, n) => void l.trainer.train(n), steps);
  await page.waitForFunction(
    ([l, target]) => l.trainer.history.length >= target && l.trainer.status === 'ready',
    [lab, before + steps] as const,
    { timeout: 600_000, polling: 200 },
  );
  return lab.evaluate((l, from) => l.trainer.history.slice(from).map((m) => m.ms), before);
}
