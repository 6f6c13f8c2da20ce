import type { Browser, JSHandle, Page } from 'playwright-core';

/** The part of the page's `?debug` state (`window.__lab`, see src/global.d.ts) the bench reads. */
export interface LabState {
  trainer: {
    status: string;
    error: string | null;
    info: { backend: string; adapter: string | null } | null;
    history: { ms: number }[];
    firstStepAt: number | null;
    train(steps: number): Promise<void>;
  };
}

/** A page of the app opened with `?debug`, and a handle on its `window.__lab`. */
export interface LabPage {
  page: Page;
  lab: JSHandle<LabState>;
}

/** Opens the app with `?debug` and `query`, and waits until the trainer is ready or failed. */
export async function openTrainer(browser: Browser, baseUrl: string, query = ''): Promise<LabPage> {
  const page = await browser.newPage();
  await page.goto(`${baseUrl}?debug${query ? `&${query}` : ''}`);
  await page.waitForFunction(
    () =>
      ['ready', 'error'].includes((window as unknown as { __lab?: LabState }).__lab?.trainer.status ?? ''),
    null,
    { timeout: 180_000 },
  );
  const lab = (await page.evaluateHandle(
    () => (window as unknown as { __lab: LabState }).__lab,
  )) as JSHandle<LabState>;
  return { page, lab };
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
