import { expect, test } from '@playwright/test';
import { onLab, untilLab } from './support/lab';
import { openReady } from './support/page';

// The trainer on wasm: this test is about what the page shows of tool use, not WebGPU speed.
test('"Learn to use the sandbox" trains on tool-use tasks; the feed shows a run, its test report and the revision after it; the timeline ticks each sandbox call', async ({
  page,
}) => {
  test.setTimeout(150_000);
  await page.setViewportSize({ width: 1440, height: 900 });
  await openReady(page, '?debug&backend=wasm&wcTimeout=3000');
  await page.getByTestId('preset').selectOption({ label: 'Learn to use the sandbox (tool use)' });
  await expect(page.getByTestId('preset-watch')).toHaveAccessibleDescription(/read the report under a turn/);
  expect(await onLab(page, (lab) => lab.run.settings.task.kind)).toBe('tooluse');
  expect(await onLab(page, (lab) => lab.run.settings.policy.startFrom)).toEqual({
    base: 'tooluse-revise-copy',
  });
  await page.getByTestId('train').click();
  await expect(page.getByTestId('train-status')).toHaveText('Training', { timeout: 60_000 });
  // From its revising base, within a minute: an episode written by a trained version whose later
  // turn fixed a failing test of its run.
  await untilLab(
    page,
    (lab) =>
      lab.feed.episodes.some((e) => (e.versions.at(-1) ?? 0) >= 1 && e.turns.some((t) => (t.fixed ?? 0) > 0)),
    { timeout: 60_000, polling: 500 },
  );
  await expect
    .poll(() => onLab(page, (lab) => lab.run.session?.settings.task.kind ?? 'no session yet'), {
      timeout: 30_000,
    })
    .toBe('tooluse');

  // A few versions trained, and an episode written by a trained version (1 or later) that ran
  // its program, read the report, and wrote another program in a later turn.
  await untilLab(
    page,
    (lab) =>
      (lab.run.session?.pipeline.version ?? 0) >= 2 &&
      lab.feed.episodes.some(
        (e) =>
          (e.versions.at(-1) ?? 0) >= 1 &&
          e.turns.some((t, k) => t.report && e.turns.slice(k + 1).some((u) => u.program !== t.program)),
      ),
    { timeout: 100_000, polling: 500 },
  );
  await onLab(page, (lab) => lab.run.stop());
  await expect(page.getByTestId('train-status')).toHaveText('Stopped: Train starts a new run', {
    timeout: 60_000,
  });
  // The newest version evaluated: the success chart's legend gains the revise line, dashed.
  const point = await onLab(page, (lab) => lab.run.evaluateLatest('easy'));
  expect(point.toolUse).toBeDefined();
  const revise = page
    .getByTestId('success-plot')
    .locator('.u-legend .u-series', { hasText: 'revised after a failed run' });
  await expect(revise).toHaveCount(1);
  expect(await revise.locator('.u-marker').evaluate((el) => getComputedStyle(el).borderTopStyle)).toBe(
    'dashed',
  );
  const { key, ran, later, taskIds } = await onLab(page, (lab) => {
    const e = lab.feed.episodes.find(
      (x) =>
        (x.versions.at(-1) ?? 0) >= 1 &&
        x.turns.some((t, k) => t.report && x.turns.slice(k + 1).some((u) => u.program !== t.program)),
    );
    if (!e) throw new Error('the episode went from the feed');
    const ranAt = e.turns.findIndex(
      (t, k) => t.report && e.turns.slice(k + 1).some((u) => u.program !== t.program),
    );
    const laterAt = e.turns.findIndex((u, k) => k > ranAt && u.program !== e.turns[ranAt]?.program);
    return { key: e.key, ran: ranAt, later: laterAt, taskIds: lab.feed.episodes.map((x) => x.taskId) };
  });
  for (const id of taskIds) expect(id).toMatch(/^tool:/); // every episode played a tool-use task

  // At 1440 × 900 the first screen shows at least four episodes whole, without scrolling.
  const feed = page.getByTestId('program-feed');
  const scroll = await page.getByTestId('feed-scroll').boundingBox();
  const cards = await feed.getByTestId('feed-episode').evaluateAll((els) =>
    els.map((el) => {
      const { top, bottom } = el.getBoundingClientRect();
      return { top, bottom };
    }),
  );
  const whole = cards.filter(
    (b) => scroll && b.top >= scroll.y && b.bottom <= scroll.y + scroll.height && b.bottom <= 900,
  );
  expect(whole.length, `${whole.length} of ${cards.length} episodes in view`).toBeGreaterThanOrEqual(4);

  // A turn that fixed failing tests of the run before it says so on its card.
  const fixes = await onLab(page, (lab) =>
    lab.feed.episodes.reduce((n, e) => n + e.turns.filter((t) => t.fixed).length, 0),
  );
  if (await feed.getByTestId('feed-more').isVisible()) await feed.getByTestId('feed-more').click();
  await expect(feed.getByTestId('feed-fixed')).toHaveCount(fixes);
  if (fixes > 0)
    await expect(feed.getByTestId('feed-fixed').first()).toHaveText(/^fixed \d+ failing tests?$/);

  // The page draws that episode: the run, the sandbox's report, and the other program later.
  const episode = feed.locator(`[data-testid=feed-episode][data-key="${key}"]`);
  await expect(episode.getByTestId('feed-solved')).toBeVisible();
  await episode.getByTestId('feed-details').click();
  const turns = episode.getByTestId('feed-turn');
  const runTurn = turns.nth(ran);
  await expect(runTurn).toHaveAttribute('data-action', 'run');
  await expect(runTurn.getByTestId('feed-report')).toHaveText(/pass \d+ of \d+/);
  const report = (await runTurn.getByTestId('feed-report').textContent()) ?? '';
  const [, passed, total] = /pass (\d+) of (\d+)/.exec(report) ?? [];
  expect(Number(total)).toBeGreaterThan(0);
  // A failing test reads as its input, what it expects and what the program gave (none on an error).
  if (Number(passed) < Number(total) && !/error:/.test(report))
    await expect(runTurn.getByTestId('feed-failure').first()).toHaveText(/f\(-?\d+\) expected \S+ got \S+/);
  const laterTurn = turns.nth(later);
  const programOf = async (i: number) => (await turns.nth(i).getByTestId('feed-program').textContent()) ?? '';
  expect(await programOf(later)).not.toBe(await programOf(ran));
  await expect(laterTurn.getByTestId('feed-revision')).toHaveText(
    later === ran + 1 ? 'revised' : /revised|same program/,
  );

  // The timeline, fitted, ticks the sandbox calls on the episode bars; the legend says so.
  await page.getByTestId('timeline-fit').click();
  await expect
    .poll(async () => Number(await page.getByTestId('timeline').getAttribute('data-calls')), {
      timeout: 10_000,
    })
    .toBeGreaterThan(0);
  await expect(page.getByTestId('legend-sandbox-call')).toBeVisible();
  await expect(page.getByTestId('run-error')).toHaveCount(0);
});
