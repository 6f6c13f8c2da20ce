import { expect, type Page } from '@playwright/test';
import { openView } from './views';

declare global {
  interface Window {
    /** Every worker the page created, by name: set by `keepWorkers`. */
    __keptWorkers?: { name: string; worker: Worker }[];
  }
}

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

/**
 * Trains `steps` steps from the Trainer check view's controls (it opens that view) and waits
 * until they are done and the trainer is ready.
 */
export async function trainSteps(page: Page, steps: number): Promise<void> {
  await openView(page, 'trainer');
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

/**
 * Keeps every worker the page creates, by name, so that a test can end one without a word
 * (`terminateWorker`): no error event fires, as when the browser drops a worker or it hangs.
 */
export async function keepWorkers(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const Native = window.Worker;
    const kept: { name: string; worker: Worker }[] = [];
    window.__keptWorkers = kept;
    window.Worker = class extends Native {
      constructor(url: string | URL, options?: WorkerOptions) {
        super(url, options);
        kept.push({ name: options?.name ?? '', worker: this });
      }
    };
  });
}

/** Terminates the newest kept worker of that name (see `keepWorkers`); fails when there is none. */
export async function terminateWorker(page: Page, name: string): Promise<void> {
  const found = await page.evaluate((n) => {
    const w = window.__keptWorkers?.filter((k) => k.name === n).at(-1);
    w?.worker.terminate();
    return w !== undefined;
  }, name);
  expect(found, `a worker named ${name}`).toBe(true);
}

/**
 * Makes the newest kept worker of that name (see `keepWorkers`) report an uncaught error, as a
 * worker that crashed does; fails when there is none.
 */
export async function crashWorker(page: Page, name: string, message: string): Promise<void> {
  const found = await page.evaluate(
    ([n, m]) => {
      const w = window.__keptWorkers?.filter((k) => k.name === n).at(-1);
      w?.worker.dispatchEvent(new ErrorEvent('error', { message: m }));
      return w !== undefined;
    },
    [name, message] as const,
  );
  expect(found, `a worker named ${name}`).toBe(true);
}
