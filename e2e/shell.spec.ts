import { expect, test, type Page } from '@playwright/test';
import { onLab } from './support/lab';
import { openReady } from './support/page';
import { openView, VIEWS } from './support/views';

/** Whether the element of this test id lies wholly inside the window. */
async function inWindow(page: Page, testid: string): Promise<boolean> {
  const box = await page.getByTestId(testid).boundingBox();
  const size = page.viewportSize();
  if (!box || !size) return false;
  return box.x >= 0 && box.y >= 0 && box.x + box.width <= size.width && box.y + box.height <= size.height;
}

test('at 1440 × 900 the first screen fits: Train, the timeline, the feed and the success chart show on load', async ({
  page,
}) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await openReady(page, '?backend=wasm&wcTimeout=1');
  await expect(page.getByTestId('view-train')).toBeVisible();
  for (const id of ['train', 'stop', 'timeline-canvas', 'feed-area', 'success-chart', 'data-flow'])
    expect(await inWindow(page, id), id).toBe(true);
  // The place of the hold buttons (Pause, Resume, Step) is in the bar beside Train.
  await expect(page.getByTestId('train-bar').getByTestId('hold-controls')).toHaveCount(1);
  const [scrollHeight, height] = await page.evaluate(() => [
    document.documentElement.scrollHeight,
    innerHeight,
  ]);
  expect(scrollHeight, 'the first screen does not scroll').toBeLessThanOrEqual(height ?? 0);
  // Everything else moved to its own view: the run settings are not on the first screen.
  await expect(page.getByTestId('run-eta')).toBeHidden();
  await expect(page.getByTestId('sandbox-run')).toBeHidden();
});

test('on a phone Train and the program feed come first, before the pipeline and the chart', async ({
  page,
}) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await openReady(page, '?backend=wasm&wcTimeout=1');
  const top = async (id: string) => (await page.getByTestId(id).boundingBox())?.y ?? Infinity;
  const train = await top('train');
  const feed = await top('feed-area');
  const flow = await top('data-flow');
  const chart = await top('success-chart');
  expect(await inWindow(page, 'train')).toBe(true);
  expect(feed).toBeLessThan(844);
  expect(train).toBeLessThan(feed);
  expect(feed).toBeLessThan(flow);
  expect(flow).toBeLessThan(chart);
});

test('the view is in the URL hash: a link opens it, back and forward move between views', async ({
  page,
}) => {
  await openReady(page, '?backend=wasm&wcTimeout=1#sandbox');
  await expect(page.getByTestId('view-sandbox')).toBeVisible();
  await expect(page.getByTestId('view-train')).toBeHidden();
  await expect(page.getByTestId('nav-sandbox')).toHaveAttribute('aria-current', 'page');
  await page.getByTestId('nav-runs').click();
  await expect(page).toHaveURL(/\?backend=wasm&wcTimeout=1#runs$/);
  await expect(page.getByTestId('view-runs')).toBeVisible();
  await expect(page.getByTestId('view-sandbox')).toBeHidden();
  await page.goBack();
  await expect(page.getByTestId('view-sandbox')).toBeVisible();
  await page.goForward();
  await expect(page.getByTestId('view-runs')).toBeVisible();
  // Exactly one view shows at a time, each from its own hash; an unknown hash opens the first screen.
  for (const view of VIEWS) {
    await openView(page, view.id);
    for (const other of VIEWS.filter((v) => v.id !== view.id))
      await expect(page.getByTestId(`view-${other.id}`)).toBeHidden();
  }
  await page.evaluate(() => (location.hash = '#no-such-view'));
  await expect(page.getByTestId('view-train')).toBeVisible();
  await expect(page.getByTestId('nav-train')).toHaveAttribute('aria-current', 'page');
});

test('Train starts a run with the preset picked on the first screen, Stop stops it, and the status says so', async ({
  page,
}) => {
  await openReady(page, '?debug&backend=wasm&wcTimeout=1');
  await page.getByTestId('preset').selectOption('sync');
  expect(await onLab(page, (lab) => lab.run.settings.pipeline.eta)).toBe(0);
  // The Settings view shows the same preset and its η.
  await openView(page, 'advanced');
  await expect(page.getByTestId('run-preset').locator('option:checked')).toHaveText(/synchronous baseline/);
  await expect(page.getByTestId('run-eta').locator('option:checked')).toHaveText('0 (synchronous)');
  await openView(page, 'train');
  await page.getByTestId('train').click();
  await expect(page.getByTestId('train-status')).toHaveText('Training', { timeout: 60_000 });
  await expect(page.getByTestId('preset')).toBeDisabled();
  await expect(page.getByTestId('stop')).toBeFocused();
  await expect(page.getByTestId('train-version')).toHaveText(/version [1-9]/, { timeout: 120_000 });
  await expect(page.getByTestId('flow-version')).toHaveText(/^[1-9]/);
  await expect(page.getByTestId('success-newest')).toContainText('training', { timeout: 120_000 });
  expect(await onLab(page, (lab) => lab.run.session?.settings.pipeline.eta)).toBe(0);
  await page.getByTestId('stop').click();
  await expect(page.getByTestId('train-status')).toHaveText('Stopped: Train starts a new run', {
    timeout: 120_000,
  });
  await expect(page.getByTestId('train')).toBeFocused();
  await expect(page.getByTestId('run-error')).toHaveCount(0);
});
