import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { onLab, untilLabWith } from './support/lab';
import { openReady } from './support/page';

// The trainer on wasm: this test is about what the page shows of the episodes, not WebGPU speed.
test('the program feed shows the programs a run writes, token by token with their versions, and what the sandbox answered; pins stay; a level filter', async ({
  page,
}) => {
  test.setTimeout(240_000);
  await openReady(page, '?debug&backend=wasm&wcTimeout=3000');
  const feed = page.getByTestId('program-feed');
  await expect(feed.getByTestId('feed-empty')).toContainText('Start a run');
  await page.getByTestId('train').click(); // the default preset: it trains until the Stop below

  // Within a minute, finished episodes. Pin the newest by keyboard at once (episodes arrive
  // faster than the checks below read it): it stays after more than the feed's 50 newer ones.
  const first = feed.getByTestId('feed-episode').first();
  await expect(first).toBeVisible({ timeout: 60_000 });
  await first.getByTestId('feed-pin').focus();
  await page.keyboard.press('Enter');
  const pinned = feed.locator('[data-testid=feed-episode]:has([data-testid=feed-pin][aria-pressed=true])');
  await expect(pinned).toHaveCount(1);
  const key = (await pinned.getAttribute('data-key')) ?? '';

  // Each episode is a compact card of its turns (program, outcome).
  await expect(pinned.getByTestId('feed-program').first()).toHaveText(/\S/);
  await expect(pinned.getByTestId('feed-outcome').first()).toHaveText(
    /^(all right|\d+ wrong|error: [a-z]+|\d+ of \d+ hidden|ran|submitted)$/,
  );
  await expect(pinned.getByTestId('feed-reward')).toHaveText(/^reward [+−]\d+\.\d\d$/);
  await expect(pinned.getByTestId('feed-solved')).toHaveText(/^(solved|not solved)$/);
  await expect(pinned.getByTestId('feed-versions')).toHaveText(/^v\d+/);
  await expect(pinned.getByTestId('feed-turn')).toHaveCount(0);
  // Its Turns button opens every turn in full: the examples shown, what the sandbox answered.
  await pinned.getByTestId('feed-details').click();
  await expect(pinned.getByTestId('feed-details')).toHaveAttribute('aria-expanded', 'true');
  await expect(pinned.getByTestId('feed-answer').first()).toHaveText(/got .+ · expected .+|error: [a-z]+/);
  await expect(pinned.getByTestId('feed-lane')).toHaveText(/played on rollout-\d/);
  const versions = await pinned
    .locator('[data-version]')
    .evaluateAll((spans) => spans.map((s) => s.dataset.version));
  expect(versions.length).toBeGreaterThan(0);
  for (const v of versions) expect(v).toMatch(/^\d+$/);
  await expect(feed.getByTestId('feed-legend')).toContainText(/v\d+/);
  await expect(page.getByTestId('best-row').first()).toBeVisible();

  const seen = await onLab(page, (lab) => lab.feed.seen);
  await untilLabWith(page, ([lab, before]) => lab.feed.seen >= before + 55, seen, { timeout: 150_000 });
  await expect(pinned).toBeVisible();
  await expect(feed.getByTestId('feed-episode').first()).not.toHaveAttribute('data-key', key);
  expect(await onLab(page, (lab) => lab.feed.episodes.length)).toBe(51); // the 50 newest and the pin
  // The 12 newest and the pin are drawn; "Show all" draws the 51.
  await expect(feed.getByTestId('feed-episode')).toHaveCount(13);
  await feed.getByTestId('feed-more').click();
  await expect(feed.getByTestId('feed-episode')).toHaveCount(51);
  await expect(feed.getByTestId('feed-announcement')).toHaveText(/^\d+ new episodes? in the program feed$/);
  // A relabelled task posed as a job is named by the outputs it asks for, never by its internal id.
  const relabelled = await onLab(page, (lab) =>
    lab.feed.episodes.filter((e) => e.taskId.startsWith('hindsight:')).map((e) => e.name),
  );
  for (const name of relabelled) expect(name).toMatch(/^relabelled goal: f\(-?\d+\) = -?\d+/);
  await expect(feed.getByTestId('feed-task').filter({ hasText: 'hindsight:' })).toHaveCount(0);

  // A level filter: the run starts at easy, so medium shows none of its episodes (or only medium ones).
  await feed.getByTestId('feed-level').selectOption('medium');
  await expect(feed.locator('[data-testid=feed-episode]:not([data-level=medium])')).toHaveCount(0);
  await feed.getByTestId('feed-level').selectOption('easy');
  await expect(pinned).toBeVisible();
  await expect(feed.locator('[data-testid=feed-episode]:not([data-level=easy])')).toHaveCount(0);

  const axe = await new AxeBuilder({ page })
    .include('[data-testid=program-feed]')
    .include('[data-testid=best-programs]')
    .analyze();
  expect(axe.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
  await onLab(page, (lab) => lab.run.stop());
  await expect(page.getByTestId('run-error')).toHaveCount(0);
});
