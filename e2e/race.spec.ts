import { AxeBuilder } from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { onLab, untilLab } from './support/lab';
import { openReady } from './support/page';
import { openView } from './support/views';

// The trainer on wasm: the race is about the pipeline's shape, not WebGPU speed.
const QUERY = '?debug&backend=wasm&wcTimeout=3000';

/** What a strip shows, as its data attributes say. */
interface Strip {
  state: string | undefined;
  trainerSpans: number;
  /** Its canvas has a size on the page (the strip is shown). */
  shown: boolean;
}

test('the race draws both legs as timeline strips on one time scale: the synchronous one stays while the asynchronous one runs', async ({
  page,
}) => {
  test.setTimeout(300_000);
  await openReady(page, QUERY);
  await openView(page, 'runs');
  await onLab(page, (l) => void l.run.race(64));

  // While the second leg runs, the first leg's strip is still drawn above the live one.
  const during = await page.waitForFunction(
    () => {
      const lab = window.__lab;
      if (lab?.run.error) throw new Error(`the race failed: ${lab.run.error}`);
      const read = (leg: string) => {
        const el = document.querySelector<HTMLElement>(`[data-testid="race-strip"][data-leg="${leg}"]`);
        const box = el?.querySelector('canvas')?.getBoundingClientRect();
        return {
          state: el?.dataset.state,
          trainerSpans: Number(el?.dataset.trainerSpans ?? 0),
          shown: !!box && box.width > 0 && box.height > 0,
        };
      };
      const [sync, async] = [read('sync'), read('async')];
      return async.state === 'live' && async.trainerSpans > 0 ? { sync, async } : null;
    },
    undefined,
    { timeout: 180_000, polling: 100 },
  );
  const live = (await during.jsonValue()) as { sync: Strip; async: Strip };
  expect(live.sync.state).toBe('done');
  expect(live.sync.shown).toBe(true);
  expect(live.sync.trainerSpans).toBeGreaterThan(0);
  expect(live.async.shown).toBe(true);

  await untilLab(page, (l) => !l.run.comparing, { timeout: 180_000 });
  await expect(page.getByTestId('run-error')).toHaveCount(0);
  const legs = await onLab(page, (l) => l.run.comparison?.legs ?? []);
  const [sync, async] = legs;
  if (!sync || !async) throw new Error('two legs expected');

  // Both strips at once, each with trainer spans, on the longer leg's time scale.
  const strips = page.getByTestId('race-strip');
  await expect(strips).toHaveCount(2);
  for (const leg of ['sync', 'async']) {
    const strip = page.locator(`[data-testid="race-strip"][data-leg="${leg}"]`);
    await expect(strip).toHaveAttribute('data-state', 'done');
    await expect(strip.locator('canvas')).toBeVisible();
    expect(Number(await strip.getAttribute('data-trainer-spans'))).toBeGreaterThan(0);
    await expect(strip.locator('canvas')).toHaveAttribute('aria-label', /trainer spans in \d+ lanes/);
  }
  const legLength = (l: typeof sync) => (l.strip ? l.strip.end - l.strip.origin : 0);
  expect(Number(await page.getByTestId('race-strips').getAttribute('data-span-ms'))).toBe(
    Math.round(Math.max(legLength(sync), legLength(async))),
  );

  // The speedup and both trainers' busy shares in words.
  const speedup = (async.samplesPerSec / sync.samplesPerSec).toFixed(2);
  const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
  await expect(page.getByTestId('run-race-result')).toContainText(
    `asynchronous: ${speedup}× the synchronous rate — its trainer was busy ${pct(async.trainerBusy)} of the time against ${pct(sync.trainerBusy)}`,
  );
  await expect(strips.first()).toContainText(
    `synchronous (η = 0): ${sync.samplesPerSec.toFixed(1)} episodes/s`,
  );

  // The strips keep axe clean.
  const { violations } = await new AxeBuilder({ page }).include('[data-testid="race-strips"]').analyze();
  expect(
    violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id),
  ).toEqual([]);
});

test('the first screen’s race button starts the race and opens Runs, where its strips are drawn', async ({
  page,
}) => {
  await openReady(page, QUERY);
  await page.getByTestId('first-race').click();
  await expect(page.getByTestId('view-runs')).toBeVisible();
  await expect(page.locator('[data-testid="race-strip"][data-leg="sync"]')).toHaveAttribute(
    'data-state',
    'live',
  );
  expect(await onLab(page, (l) => l.run.comparing)).toBe(true);
  await onLab(page, (l) => l.run.stop());
  await untilLab(page, (l) => !l.run.comparing, { timeout: 120_000 });
  await expect(page.getByTestId('run-compare-stopped')).toBeVisible();
  await expect(page.locator('[data-testid="race-strip"][data-leg="sync"]')).toContainText(
    'stopped before its episodes',
  );
  await expect(page.locator('[data-testid="race-strip"][data-leg="async"]')).toContainText('did not run');
});
