import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { onLab, untilLab } from './support/lab';
import { expectNoSidewaysScroll, openReady } from './support/page';
import { openView } from './support/views';

// The trainer on wasm: this test is about the loop and the curriculum in the page, not WebGPU speed.
test('a synchronous training run publishes versions and shows its curriculum, which can be turned off', async ({
  page,
}) => {
  await openReady(page, '?debug&backend=wasm&wcTimeout=3000');
  await onLab(page, (lab) => lab.run.start({ maxIterations: 2, evalEvery: 2 }));
  await expect(page.getByTestId('run-iteration')).toHaveText('2', { timeout: 120_000 });
  await expect(page.getByTestId('curriculum-level')).toHaveText('easy');
  // 2 batches of easy episodes: the rate is shown over every easy training task of the built-in suite.
  await expect(page.getByTestId('curriculum')).toContainText('mean success of its 26 training tasks');
  await expect(page.getByTestId('curriculum')).toContainText('last 20 episodes');
  await expect(page.getByTestId('curriculum-rate')).toHaveText(/^\d+%$/);
  await expect(page.getByTestId('run-progress')).toContainText('version 2');
  await expect(page.getByTestId('run-metrics')).toContainText('loss (decoupled)');
  await expect(page.getByTestId('run-eval-train')).toHaveText(/^\d+%$/);
  // The reward and success charts plot the steps: hovering one shows a version's value in its legend.
  await openView(page, 'figures');
  for (const id of ['run-chart-return', 'run-chart-success', 'run-chart-eval']) {
    const chart = page.getByTestId(id);
    await expect(chart).not.toContainText('no data yet');
    // Away from the pointer its legend shows the newest point (it said "--"), in words for a screen reader too.
    await expect(chart.locator('.u-series').nth(1).locator('.u-value')).toHaveText(/^-?\d/);
    await expect(chart.getByRole('img')).toHaveAttribute('aria-label', /newest: version 2, /);
    await chart.locator('.u-over').hover();
    await expect(chart.locator('.u-series').nth(1).locator('.u-value')).toHaveText(/^-?\d/);
  }
  await expect(page.getByTestId('run-chart-eval')).toContainText('held-out tasks');
  // The training curves (a chunk loaded with the view): a chart per trainer figure, each drawing
  // the two versions trained, its unit on the y axis.
  const curves = page.getByTestId('training-curves');
  const ids = [
    'policy-loss',
    'value-loss',
    'entropy',
    'approx-kl',
    'grad-norm',
    'clipped',
    'turns',
    'tokens',
    'spread',
  ];
  for (const id of ids) {
    const chart = curves.getByTestId(`curve-${id}`);
    await expect(chart.getByRole('img')).toHaveAttribute(
      'aria-label',
      /; newest: version 2, [\w\s-]+ -?\d[\d.e+-]*%?(;|$)/,
    );
    await expect(chart.locator('.u-series').nth(1).locator('.u-value')).toHaveText(/^-?\d/);
  }
  await expect(curves.getByTestId('curve-tokens')).toContainText('policy tokens per episode');
  await expect(curves.locator('canvas')).toHaveCount(ids.length);
  await expect(page.getByTestId('run-start')).toBeEnabled();
  // The program feed's opened turns each say the value head's estimate at their start.
  await openView(page, 'train');
  const episode = page.getByTestId('program-feed').getByTestId('feed-episode').first();
  await episode.getByTestId('feed-details').click();
  await expect(episode.getByTestId('feed-value').first()).toHaveText(/^V −?\d+\.\d\d$/);
  await expect(episode.getByTestId('feed-value').first()).toHaveAttribute('title', /value head/);

  await openView(page, 'advanced');
  await page.getByTestId('curriculum-toggle').uncheck();
  await onLab(page, (lab) => lab.run.start({ maxIterations: 1 }));
  await expect(page.getByTestId('curriculum-level')).toHaveText('off');
  await expect(page.getByTestId('run-iteration')).toHaveText('1', { timeout: 120_000 });
  await expect(page.getByTestId('run-error')).toHaveCount(0);
});

test('a stored version played greedily on a held-out task shows its episode in the feed, marked with the version and task', async ({
  page,
}) => {
  await openReady(page, '?debug&backend=wasm&wcTimeout=3000');
  await onLab(page, (lab) => lab.run.start({ maxIterations: 2 }));
  await expect(page.getByTestId('run-iteration')).toHaveText('2', { timeout: 120_000 });
  await untilLab(page, (lab) => !lab.run.running);
  const runId = (await onLab(page, (lab) => lab.run.runId)) ?? '';
  const seqs = await onLab(page, (lab) => lab.run.storedSeqs());
  // The feed shows arrivals on a timer: the count settles once the last group's refresh has run.
  let seen = -1;
  await expect
    .poll(
      async () => {
        const before = seen;
        seen = await onLab(page, (lab) => lab.feed.seen);
        return seen === before;
      },
      { intervals: [1_000] },
    )
    .toBe(true);

  // The control opens beside the feed, by keyboard; its choices are the run's stored versions
  // and its tasks grouped by split.
  const feed = page.getByTestId('program-feed');
  await feed.getByTestId('feed-play-open').focus();
  await page.keyboard.press('Enter');
  await expect(feed.getByTestId('feed-play-open')).toHaveAttribute('aria-expanded', 'true');
  const control = feed.getByTestId('greedy-play');
  const version = control.getByRole('combobox', { name: 'version' });
  await expect(version.locator('option')).toHaveText(['v2', 'v1', 'v0']);
  await expect(control.locator('optgroup')).toHaveCount(3);
  await version.selectOption({ label: 'v1' });
  const task = control.getByRole('combobox', { name: 'task' });
  const heldOut = control.locator('optgroup[label="Held-out tasks"] option').nth(1);
  const taskId = (await heldOut.getAttribute('value')) ?? '';
  expect(taskId).not.toBe('');
  await task.selectOption(taskId);
  await control.getByRole('button', { name: 'Play greedily' }).click();

  const status = control.getByTestId('greedy-status');
  await expect(status).toHaveAttribute('data-phase', 'done', { timeout: 60_000 });
  await expect(status).toContainText(`Played v1 on ${taskId}: `);
  await expect(status).toHaveText(
    /: (solved|not solved), reward [+−]\d+\.\d\d, \d+ turns?; shown at the top of the feed\.$/,
  );
  // The episode is the feed's first card: marked as a replay of v1 on that task, with its turns.
  const replay = feed.getByTestId('feed-episode').first();
  await expect(replay.getByTestId('feed-replay')).toHaveText(
    `played greedily by v1 on ${taskId} (held-out task)`,
  );
  await expect(replay.getByTestId('feed-task')).toHaveText(taskId);
  await expect(replay.getByTestId('feed-versions')).toHaveText('v1');
  await expect(replay.getByTestId('feed-reward')).toHaveText(/^reward [+−]\d+\.\d\d$/);
  await expect(replay.getByTestId('feed-program').first()).toBeVisible();
  await replay.getByTestId('feed-details').click();
  await expect(replay.getByTestId('feed-lane')).toHaveText('· played on evaluator');
  await expect(replay.getByTestId('feed-answer').first()).toHaveText(/got .+ · expected .+|error: [a-z]+/);

  const axe = await new AxeBuilder({ page }).include('[data-testid=greedy-play]').analyze();
  expect(axe.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);

  // The run's history is untouched: no trajectory stored, no episode counted, the same run shown.
  expect(await onLab(page, (lab) => lab.run.storedSeqs())).toEqual(seqs);
  expect(await onLab(page, (lab) => lab.feed.seen)).toBe(seen);
  expect(await onLab(page, (lab) => lab.run.runId)).toBe(runId);
  await expect(page.getByTestId('run-error')).toHaveCount(0);
});

test('by keyboard, Start and Stop hand the focus to each other instead of dropping it', async ({ page }) => {
  await openReady(page, '?backend=wasm&wcTimeout=3000');
  await openView(page, 'runs');
  await page.getByTestId('run-start').focus();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('run-stop')).toBeFocused();
  await expect(page.getByTestId('run-progress')).toContainText('version 1', { timeout: 120_000 });
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('run-start')).toBeEnabled({ timeout: 120_000 });
  await expect(page.getByTestId('run-start')).toBeFocused();
  await expect(page.getByTestId('run-error')).toHaveCount(0);
  // The stopped run's dashboard keeps what its workers last reported (it turned to "–").
  await expect(page.getByTestId('pipe-rollout-on')).toContainText('quickjs');
  await expect(page.getByTestId('pipe-cache')).toHaveText(/^\d+%$/);
});

test('the learning-rate schedule chosen in the run panel reaches the trainer', async ({ page }) => {
  await openReady(page, '?debug&backend=wasm&wcTimeout=3000');
  await openView(page, 'advanced');
  await expect(page.getByTestId('run-lr-schedule')).toHaveValue('600'); // the default
  await page.getByTestId('run-lr-schedule').selectOption({ label: 'halves every 300 versions' });
  await onLab(page, (lab) => lab.run.start({ maxIterations: 3 }));
  await expect(page.getByTestId('run-iteration')).toHaveText('3', { timeout: 120_000 });
  // The step that made version 3 trained from version 2: 3e-3 · 0.5^(2/300).
  await expect(page.getByTestId('run-lr')).toHaveText((3e-3 * 0.5 ** (2 / 300)).toExponential(2));
  await page.getByTestId('run-lr-schedule').selectOption({ label: 'constant' });
  await onLab(page, (lab) => lab.run.start({ maxIterations: 3 }));
  await expect(page.getByTestId('run-iteration')).toHaveText('3', { timeout: 120_000 });
  await expect(page.getByTestId('run-lr')).toHaveText('3.00e-3');
  await expect(page.getByTestId('run-error')).toHaveCount(0);
});

test('updates per batch chosen in the run panel reach the trainer: from the second, the decoupled clip acts', async ({
  page,
}) => {
  await openReady(page, '?debug&backend=wasm&wcTimeout=3000');
  await openView(page, 'advanced');
  await expect(page.getByTestId('run-updates')).toHaveValue('1'); // the default
  // One update per batch: decoupled PPO's step starts at π_prox, so approx KL is exactly 0.
  await onLab(page, (lab) => lab.run.start({ maxIterations: 2 }));
  await expect(page.getByTestId('run-iteration')).toHaveText('2', { timeout: 120_000 });
  await expect(page.getByTestId('run-kl')).toHaveText('0');
  // Two: the second step has moved away from π_prox.
  await page.getByTestId('run-updates').selectOption('2');
  await onLab(page, (lab) => lab.run.start({ maxIterations: 2 }));
  await expect(page.getByTestId('run-iteration')).toHaveText('2', { timeout: 120_000 });
  await expect(page.getByTestId('run-kl')).not.toHaveText('0');
  expect(Number(await page.getByTestId('run-kl').textContent())).toBeGreaterThan(0);
  await expect(page.getByTestId('run-error')).toHaveCount(0);
});

test('a share link carries the run settings to another page; a broken one says what is wrong', async ({
  page,
  context,
}) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await openReady(page, '?backend=wasm&wcTimeout=3000');
  await openView(page, 'advanced');
  await page.getByTestId('run-eta').selectOption({ label: '1' });
  await page.getByTestId('run-workers').fill('2');
  await page.getByTestId('run-lr-schedule').selectOption({ label: 'constant' });
  await openView(page, 'runs');
  await page.getByTestId('run-share').click();
  const link = await page.getByTestId('run-share-link').inputValue();
  // The page says the link was copied, and it was.
  await expect(page.getByTestId('run-share-copied')).toHaveText('copied to the clipboard');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(link);
  // A change of the settings takes the link away (it no longer matches them); making it again works.
  await openView(page, 'advanced');
  await page.getByTestId('run-workers').fill('3');
  await expect(page.getByTestId('run-share-link')).toHaveCount(0);
  await page.getByTestId('run-workers').fill('2');
  await openView(page, 'runs');
  await page.getByTestId('run-share').click();
  expect(await page.getByTestId('run-share-link').inputValue()).toBe(link);
  expect(new URL(link).searchParams.get('backend')).toBe('wasm');
  expect(new URL(link).searchParams.get('run')).toMatch(/^z\.[A-Za-z0-9_-]+$/); // deflated, base64url
  expect(new URL(link).hash).toBe(''); // made on the Runs view, it opens the first screen

  const other = await context.newPage();
  await other.goto(link);
  await expect(other.getByTestId('view-train')).toBeVisible();
  await expect(other.getByTestId('run-notice')).toContainText('Settings from the share link');
  await expect(other.getByTestId('run-eta').locator('option:checked')).toHaveText('1');
  await expect(other.getByTestId('run-workers')).toHaveValue('2');
  await expect(other.getByTestId('run-lr-schedule').locator('option:checked')).toHaveText('constant');
  await expect(other.getByTestId('run-error')).toHaveCount(0);

  await other.goto(`${link.slice(0, link.length - 20)}`); // cut short
  await expect(other.getByTestId('run-error')).toContainText("the share link's settings cannot be read");
  await expect(other.getByTestId('run-eta').locator('option:checked')).toHaveText('4'); // defaults kept

  // A stray '%' in the address (a link mangled in a chat) still opens the page, with the message.
  const errors: string[] = [];
  other.on('pageerror', (e) => errors.push(e.message));
  await other.goto(`${new URL(link).origin}/?backend=wasm&x=%&run=%zz`);
  await expect(other.getByTestId('run-error')).toContainText("the share link's settings cannot be read");
  await expect(other.getByTestId('trainer-status')).toHaveText('ready', { timeout: 120_000 });
  expect(errors).toEqual([]);

  // Settings a run would refuse make no link: the panel says why.
  await openView(page, 'advanced');
  await page.getByTestId('run-workers').fill('0');
  await openView(page, 'runs');
  await page.getByTestId('run-share').click();
  await expect(page.getByTestId('run-error')).toContainText('no share link:');
  await expect(page.getByTestId('run-share-link')).toHaveCount(0);
});

test('a teaching preset sets η, the loss, adoption and the curriculum, and says what to watch', async ({
  page,
}) => {
  await openReady(page, '?backend=wasm&wcTimeout=3000');
  await openView(page, 'advanced');
  const preset = page.getByTestId('run-preset');
  await expect(preset.locator('option:checked')).toHaveText(/asynchronous, as AReaL/); // the defaults
  await preset.selectOption({ label: 'synchronous baseline (η = 0)' });
  await expect(page.getByTestId('run-eta').locator('option:checked')).toHaveText('0 (synchronous)');
  await expect(page.getByTestId('run-preset-watch')).toContainText('never overlap');
  await preset.selectOption({ label: 'unbounded staleness, standard PPO' });
  await expect(page.getByTestId('run-eta').locator('option:checked')).toHaveText('unbounded');
  await expect(page.getByTestId('run-loss').locator('option:checked')).toHaveText('PPO clip');
  await preset.selectOption({ label: 'curriculum off (every level at once)' });
  await expect(page.getByTestId('curriculum-toggle')).not.toBeChecked();
  await expect(page.getByTestId('run-eta').locator('option:checked')).toHaveText('4');
  // A knob changed by hand: the panel says the settings are its own.
  await page.getByTestId('run-eta').selectOption({ label: '2' });
  await expect(preset.locator('option:checked')).toHaveText(/custom/);
  await expect(page.getByTestId('run-preset-watch')).toHaveCount(0);
});

test('on a phone-sized screen the panels stack in one column and the page does not scroll sideways', async ({
  page,
}) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await openReady(page, '?backend=wasm&wcTimeout=3000');
  // The panels were at least 420 px wide: at 390 the page scrolled sideways and cut every panel.
  await expectNoSidewaysScroll(page);
  await openView(page, 'runs');
  await expectNoSidewaysScroll(page);
  const start = await page.getByTestId('run-start').boundingBox();
  expect(start && start.x + start.width).toBeLessThanOrEqual(390);
});
