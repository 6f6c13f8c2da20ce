import { AxeBuilder } from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { onLab, untilLab } from './support/lab';
import { openReady } from './support/page';
import { openView, VIEWS } from './support/views';

/** The two screens every view is checked on: a laptop and a phone. */
const SIZES = [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
] as const;

/** Axe's serious and critical violations on the page as it shows now, one line each. */
async function seriousViolations(page: Page): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} — ${v.nodes.length} elements: ${v.nodes
          .slice(0, 3)
          .map((n) => n.target.join(' '))
          .join(', ')}`,
    );
}

for (const size of SIZES) {
  test(`every view at ${size.width} × ${size.height}: no serious or critical axe violation, no sideways scroll, a screenshot`, async ({
    page,
  }) => {
    test.setTimeout(300_000);
    await page.setViewportSize(size);
    await openReady(page, '?backend=wasm&wcTimeout=1');
    for (const view of VIEWS) {
      await openView(page, view.id);
      expect(await seriousViolations(page), `the ${view.id} view`).toEqual([]);
      const wide = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(wide, `the ${view.id} view's width`).toBe(size.width);
      await page.screenshot({
        path: `test-results/screenshots/${view.id}-${size.width}x${size.height}.png`,
        fullPage: true,
      });
    }
  });
}

test('while a run trains, the first screen and the figures (its curves drawn, on both screens) pass axe too', async ({
  page,
}) => {
  await openReady(page, '?debug&backend=wasm&wcTimeout=1');
  await onLab(page, (lab) => void lab.run.start({ maxIterations: 3, evalEvery: 2 }));
  await untilLab(page, (lab) => lab.run.evals.length > 0 && (lab.run.dashboard?.version ?? 0) >= 2, {
    timeout: 120_000,
  });
  await expect(page.getByTestId('train-status')).toHaveText('Training');
  expect(await seriousViolations(page), 'the train view').toEqual([]);
  // The figures with data in them (the training curves drawn) on both screens.
  for (const size of SIZES) {
    await page.setViewportSize(size);
    await openView(page, 'figures');
    await expect(page.getByTestId('pipeline-stats')).toBeVisible();
    await expect(page.getByTestId('training-curves').locator('canvas').first()).toBeVisible();
    expect(await seriousViolations(page), `the figures view at ${size.width}`).toEqual([]);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(wide, `the figures view's width at ${size.width}`).toBe(size.width);
  }
  await onLab(page, (lab) => lab.run.stop());
});

test('an explanation shown on hover or focus passes axe too', async ({ page }) => {
  await openReady(page, '?backend=wasm&wcTimeout=1');
  const term = page.getByTestId('flow-term-buffer');
  await term.focus();
  const tip = page.getByRole('tooltip', { name: /Finished groups wait here/ });
  await expect(tip).toBeVisible();
  await expect(term).toHaveAccessibleDescription(/Finished groups wait here/);
  expect(await seriousViolations(page)).toEqual([]);
  await page.keyboard.press('Escape');
  await expect(tip).toBeHidden();
  // On a phone an explanation near the edge does not widen the page.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByTestId('flow-term-sandbox').focus();
  await expect(page.getByRole('tooltip', { name: /QuickJS in each worker/ })).toBeInViewport({ ratio: 1 });
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
});

test('by keyboard alone: Tab reaches every view link and Train, and a link opens its view with focus in it', async ({
  page,
}) => {
  await openReady(page, '?backend=wasm&wcTimeout=1');
  await expect(page.getByTestId('train')).toBeEnabled();
  const reached = new Set<string>();
  for (let i = 0; i < 40 && !reached.has('train'); i++) {
    await page.keyboard.press('Tab');
    reached.add(await page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? ''));
  }
  for (const view of VIEWS) expect([...reached], `the link to ${view.id}`).toContain(`nav-${view.id}`);
  expect([...reached]).toContain('train');

  await page.getByTestId('nav-sandbox').focus();
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/#sandbox$/);
  await expect(page.getByTestId('view-sandbox')).toBeFocused();
  await expect(page.getByTestId('nav-sandbox')).toHaveAttribute('aria-current', 'page');
  await page.keyboard.press('Tab');
  // The next stop is inside the sandbox view, not back at the top of the page.
  expect(
    await page.evaluate(() =>
      document.querySelector('[data-view="sandbox"]')?.contains(document.activeElement),
    ),
  ).toBe(true);
});

test('what changes by itself is in live regions: the run state, the trainer state, notices and errors', async ({
  page,
}) => {
  await openReady(page, '?backend=wasm&wcTimeout=1');
  await expect(page.getByTestId('train-status')).toHaveAttribute('role', 'status');
  await expect(page.getByTestId('train-status')).toHaveText(/Ready/);
  await expect(page.getByTestId('trainer-status')).toHaveAttribute('role', 'status');
  // Notices and errors: the page's message region is a live region whatever view is open.
  await page.goto('./?backend=wasm&wcTimeout=1&run=not-a-link#runs');
  await expect(page.getByTestId('run-error')).toHaveAttribute('role', 'alert');
  await expect(page.getByTestId('run-error')).toBeVisible();
});
