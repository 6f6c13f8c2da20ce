import { expect, test, type Browser } from '@playwright/test';
import { onLab, untilLabWith } from './support/lab';
import { openReady } from './support/page';
import { openView } from './support/views';

// The trainer and the rollouts on wasm: the same backend for both runs.
const QUERY = '?debug&backend=wasm&wcTimeout=3000';
/** Versions compared between the two runs. */
const VERSIONS = 10;

/** What a version of a run must repeat, bit for bit. */
interface VersionFigures {
  version: number;
  loss: number;
  meanReturn: number;
  success: number;
  entropy: number;
  episodes: number;
}

/**
 * Trains a synchronous run (η = 0, one rollout worker, seed 7) to `VERSIONS` in a page of a
 * fresh browser context (its own IndexedDB, its own workers); returns each version's figures.
 */
async function synchronousRun(browser: Browser, baseURL: string | undefined): Promise<VersionFigures[]> {
  const context = await browser.newContext({ baseURL });
  try {
    const page = await context.newPage();
    await openReady(page, QUERY);
    await onLab(
      page,
      (l) => void l.run.start({ config: { pipeline: { eta: 0, workers: 1 }, seed: 7 }, evalEvery: 0 }),
    );
    await untilLabWith(
      page,
      ([l, v]) => {
        if (l.run.error) throw new Error(`the run failed: ${l.run.error}`);
        return l.run.steps.filter((s) => s.version <= v).length >= v;
      },
      VERSIONS,
      { timeout: 240_000, polling: 250 },
    );
    const figures = await onLab(page, (l) =>
      l.run.steps.map((s) => ({
        version: s.version,
        loss: s.loss,
        meanReturn: s.meanReturn,
        success: s.success,
        entropy: s.metrics.entropy,
        episodes: s.episodes,
      })),
    );
    const interrupts = await onLab(page, (l) => l.run.dashboard?.counters.interrupts ?? -1);
    await onLab(page, (l) => l.run.stop());
    // η = 0 never adopts a version mid-episode: nothing timing-dependent in the episodes.
    expect(interrupts).toBe(0);
    return figures.filter((f) => f.version <= VERSIONS).sort((a, b) => a.version - b.version);
  } finally {
    await context.close();
  }
}

test('a synchronous run repeats bit for bit: the same settings and seed give the same losses and returns', async ({
  browser,
  baseURL,
}) => {
  test.setTimeout(600_000);
  const first = await synchronousRun(browser, baseURL);
  const second = await synchronousRun(browser, baseURL);
  expect(first.map((f) => f.version)).toEqual(Array.from({ length: VERSIONS }, (_, i) => i + 1));
  // Exact equality (toEqual compares numbers with Object.is): no tolerance.
  expect(second).toEqual(first);
  // The figures are those of a run that trained: not one number repeated for want of data.
  expect(new Set(first.map((f) => f.loss)).size).toBeGreaterThan(1);
});

test('the share link says that an asynchronous run differs, and not for a synchronous one', async ({
  page,
}) => {
  await openReady(page, QUERY);
  await openView(page, 'runs');
  await onLab(page, (l) => void (l.run.settings.pipeline.eta = 2));
  await page.getByTestId('run-share').click();
  await expect(page.getByTestId('run-share-link')).toBeVisible();
  await expect(page.getByTestId('run-share-async')).toContainText('depends on timing');
  await onLab(page, (l) => void (l.run.settings.pipeline.eta = 0));
  await page.getByTestId('run-share').click();
  await expect(page.getByTestId('run-share-link')).toBeVisible();
  await expect(page.getByTestId('run-share-async')).toHaveCount(0);
});
