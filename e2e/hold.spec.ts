import { expect, test, type Page } from '@playwright/test';
import { onLab } from './support/lab';
import { openReady } from './support/page';

// The trainer on wasm: this test is about holding the pipeline, not WebGPU speed.
const QUERY = '?debug&backend=wasm&wcTimeout=3000';

/** What holds still while the run is paused: the published version, the stored samples, the timeline. */
async function still(page: Page): Promise<{ version: number; stored: number; events: number }> {
  return onLab(page, async (l) => {
    if (l.run.error) throw new Error(`the run failed: ${l.run.error}`);
    return {
      version: l.run.session?.pipeline.version ?? -1,
      stored: (await l.run.storedSeqs()).length,
      events: l.run.session?.log.pushed ?? -1,
    };
  });
}

/** Waits until the run has published `version` and stored more than `stored` samples. */
async function untilPast(page: Page, at: { version: number; stored: number }): Promise<void> {
  await expect
    .poll(
      async () => {
        const now = await still(page);
        return now.version >= at.version && now.stored > at.stored;
      },
      { timeout: 120_000, intervals: [250] },
    )
    .toBe(true);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('Pause holds a run still, Resume goes on, Step trains exactly one version and holds', async ({
  page,
}) => {
  await openReady(page, QUERY);
  const status = page.getByTestId('run-hold');
  await expect(page.getByTestId('pause')).toBeDisabled(); // no run to hold
  await expect(page.getByTestId('step')).toBeDisabled();
  await onLab(page, (l) => void l.run.start({ config: { pipeline: { eta: 2, workers: 1 } }, evalEvery: 0 }));
  await untilPast(page, { version: 2, stored: 0 });

  // Pause: the work in progress finishes, then nothing moves for 5 s.
  await page.getByTestId('pause').click();
  await expect(status).toHaveText(/^Paused at version \d+$/, { timeout: 120_000 });
  await expect(page.getByTestId('resume')).toBeEnabled();
  await expect(page.getByTestId('pause')).toHaveCount(0);
  await sleep(500); // the workers' last timeline events are sent in batches of 100 ms
  const paused = await still(page);
  expect(paused.version).toBeGreaterThanOrEqual(2);
  await expect(status).toHaveText(`Paused at version ${paused.version}`);
  await sleep(5_000);
  expect(await still(page)).toEqual(paused);
  expect(await onLab(page, (l) => l.run.running)).toBe(true); // held, not stopped

  // Resume: the version and the stored samples go on.
  await page.getByTestId('resume').click();
  await expect(status).toHaveText('');
  await untilPast(page, { version: paused.version + 1, stored: paused.stored });

  // Pause, then Step: exactly one more version, and it holds there.
  await page.getByTestId('pause').click();
  await expect(status).toHaveText(/^Paused at version \d+$/, { timeout: 120_000 });
  const before = await still(page);
  await page.getByTestId('step').click();
  await expect(status).toHaveText(`Paused at version ${before.version + 1}`, { timeout: 120_000 });
  await expect(page.getByTestId('step')).toBeEnabled();
  await sleep(500);
  const stepped = await still(page);
  expect(stepped.version).toBe(before.version + 1);
  await sleep(3_000);
  expect(await still(page)).toEqual(stepped);
  expect(await onLab(page, (l) => l.run.steps.at(-1)?.version)).toBe(before.version + 1);

  await onLab(page, (l) => l.run.stop());
  await expect(page.getByTestId('run-start')).toBeEnabled();
  await expect(page.getByTestId('pause')).toBeDisabled();
  await expect(page.getByTestId('run-error')).toHaveCount(0);
});
