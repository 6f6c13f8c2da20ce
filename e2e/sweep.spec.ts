import { AxeBuilder } from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { onLab, untilLab } from './support/lab';
import { openReady } from './support/page';
import { openView } from './support/views';

// The trainer on wasm: the sweep is about the losses and the lag, not WebGPU speed.
const QUERY = '?debug&backend=wasm&wcTimeout=3000';

/** Axe's serious and critical findings on the sweep chart of a view (shown). */
async function seriousViolations(page: Page, view: string): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page })
    .include(`[data-testid="view-${view}"] [data-testid="sweep-chart"]`)
    .analyze();
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id);
}

test('the staleness preset sweeps both losses at each η and draws them on the first screen as legs finish', async ({
  page,
}) => {
  test.setTimeout(240_000);
  await page.setViewportSize({ width: 1440, height: 900 });
  await openReady(page, QUERY);
  await page.getByTestId('preset').selectOption('staleness-sweep');
  await expect(page.getByTestId('preset-watch')).toHaveAccessibleDescription(/docs\/experiments\.md/);
  // Its runs and their time, before Train: 2 η × 2 losses × 3 seeds of 3 200 episodes.
  await expect(page.getByTestId('preset-estimate')).toHaveText(/^12 runs, about \d+ min$/);

  // Train runs the preset's sweep: every η with standard PPO, then decoupled PPO, staleness held at η,
  // from the built-in base, four steps per batch, 16 relabelled rows and no gradient clip on the easy
  // level. Stop ends it in its first leg, once that leg has trained from the base.
  await page.getByTestId('train').click();
  await untilLab(page, (l) => l.run.running && l.run.comparing, { timeout: 60_000 });
  const plan = await onLab(page, (l) =>
    l.run.comparison?.plan.map(
      (p) =>
        `${p.eta} ${p.loss} ${p.seed} ${p.fixedLag} ${p.level} ${p.config?.learner?.updatesPerBatch} ${p.config?.learner?.maxGradNorm} ${JSON.stringify(p.config?.policy?.startFrom)}`,
    ),
  );
  const from = '1000 {"base":"easy-half"}';
  // Three seeds a cell, each a leg of its own.
  expect(plan).toEqual(
    ['0 ppo', '0 decoupled', '32 ppo', '32 decoupled'].flatMap((cell) =>
      [1, 2, 3].map((seed) => `${cell} ${seed} true easy 4 ${from}`),
    ),
  );
  const first = page.getByTestId('view-train');
  const status = first.getByTestId('sweep-status');
  await expect(status).toHaveText('running leg 1 of 12: η = 0, standard PPO');
  await expect(page.getByTestId('train-status')).toHaveText(/^Sweeping: leg 1 of 12/);
  await expect(first.getByTestId('sweep-point')).toHaveCount(0);
  // The trainer fetched the base (a page asset, from its worker) and trained on from it.
  await untilLab(page, (l) => l.run.steps.length > 0, { timeout: 60_000 });
  await expect(page.getByTestId('run-error')).toHaveCount(0);
  await page.getByTestId('stop').click();
  await untilLab(page, (l) => !l.run.comparing, { timeout: 60_000 });
  await expect(status).toHaveText(
    'stopped during leg 1 of 12 (η = 0, standard PPO); the legs after it did not run',
  );

  // A short fixed-lag sweep through the page's hook: the chart gains a point as each leg ends.
  await onLab(page, (l) => void l.run.sweep(64, [0, 2], ['ppo', 'decoupled'], { fixedLag: true }));
  await untilLab(page, (l) => l.run.comparison?.legs.length === 1 && l.run.comparing, { timeout: 90_000 });
  await expect(first.getByTestId('sweep-point')).toHaveCount(1);
  await untilLab(page, (l) => !l.run.comparing, { timeout: 150_000 });
  await expect(page.getByTestId('run-error')).toHaveCount(0);
  const legs = await onLab(page, (l) => l.run.comparison?.legs ?? []);
  expect(legs.map((g) => `${g.eta} ${g.loss}`)).toEqual(['0 ppo', '0 decoupled', '2 ppo', '2 decoupled']);
  const points = first.getByTestId('sweep-point');
  await expect(points).toHaveCount(4);
  for (const loss of ['ppo', 'decoupled'])
    for (const eta of ['0', '2']) {
      const point = first.locator(`[data-testid="sweep-point"][data-loss="${loss}"][data-eta="${eta}"]`);
      const value = Number(await point.getAttribute('data-value'));
      expect(value, `${loss} at η ${eta}`).toBeGreaterThanOrEqual(0);
      expect(value, `${loss} at η ${eta}`).toBeLessThanOrEqual(1);
    }
  // Each η's lag, as numbers: PPO's clipped share, decoupled PPO's masked share and lag KL.
  const rows = first.getByTestId('sweep-lag').locator('tbody tr');
  await expect(rows).toHaveCount(2);
  for (const i of [0, 1]) {
    await expect(rows.nth(i).getByTestId('sweep-clipped')).toHaveText(/^\d+%$/);
    await expect(rows.nth(i).getByTestId('sweep-masked')).toHaveText(/^\d+\.\d{2}%$/);
    await expect(rows.nth(i).getByTestId('sweep-lag-kl')).toHaveText(/^\d+\.\d{3}$/);
  }
  for (const g of legs) {
    expect(g.success?.train).toBeGreaterThanOrEqual(0);
    expect(Number.isFinite(g.lag.clipped)).toBe(true);
  }
  // Held at η: each leg's four batches were played 0, 1, 2, 2 versions back at η = 2 (none at η = 0), which
  // the decoupled loss measures as KL(π_behav ‖ π_prox): about nothing at η = 0, more at η = 2.
  expect(legs.map((g) => [g.fixedLag, g.meanStaleness])).toEqual([
    [true, 0],
    [true, 0],
    [true, 1.25],
    [true, 1.25],
  ]);
  const decoupled = legs.filter((g) => g.loss === 'decoupled');
  const [kl0, kl2] = decoupled.map((g) => g.lag.kl);
  expect(kl0).toBeLessThan(1e-4);
  expect(kl2).toBeGreaterThan(Math.max(1e-4, 10 * (kl0 ?? 0)));
  expect(decoupled.map((g) => Number.isFinite(g.lag.kl) && Number.isFinite(g.lag.masked))).toEqual([
    true,
    true,
  ]);
  await expect(first.getByTestId('sweep-honest')).toContainText('docs/experiments.md');
  const [scrollHeight, height] = await page.evaluate(() => [
    document.documentElement.scrollHeight,
    innerHeight,
  ]);
  expect(scrollHeight, 'the first screen with the sweep chart does not scroll').toBeLessThanOrEqual(
    height ?? 0,
  );

  expect(await seriousViolations(page, 'train')).toEqual([]);

  // The Runs view has the table, a row per leg with its loss and lag, and the chart beside it.
  await openView(page, 'runs');
  const table = page.getByTestId('run-compare-table');
  await expect(table.locator('tbody tr')).toHaveCount(4);
  await expect(table.getByTestId('compare-clipped')).toHaveText([/^\d+%$/, /^\d+%$/, /^\d+%$/, /^\d+%$/]);
  await expect(table.getByTestId('compare-lag-kl')).toHaveText(['–', /^\d\.\d{3}$/, '–', /^\d\.\d{3}$/]);
  await expect(page.getByTestId('view-runs').getByTestId('sweep-point')).toHaveCount(4);
  await expect(page.getByTestId('run-sweep-note')).toContainText('standard PPO and with decoupled PPO');
  expect(await seriousViolations(page, 'runs')).toEqual([]);
});
