import { expect, test } from '@playwright/test';
import { onLab, untilLab } from './support/lab';
import { openReady } from './support/page';
import { openView } from './support/views';

// The trainer on wasm: the sweep is about its legs and figures, not WebGPU speed.
const QUERY = '?debug&backend=wasm&wcTimeout=3000';

test('a sensitivity sweep of two values × two seeds runs four legs and draws each value with its ±1 sd band', async ({
  page,
}) => {
  test.setTimeout(300_000);
  await openReady(page, QUERY);
  await openView(page, 'runs');
  const form = page.getByTestId('field-sweep-form');
  await form.getByTestId('field-sweep-field').selectOption('learner.clipEps');
  const check = form.getByTestId('field-sweep-check');
  const start = form.getByTestId('field-sweep-start');

  // A value out of the field's limits is refused, naming the field and its range.
  await form.getByTestId('field-sweep-values').fill('0.1, 5');
  await expect(check).toHaveText('learner.clipEps must be a number above 0, at most 1, got 5');
  await expect(start).toBeDisabled();
  await form.getByTestId('field-sweep-values').fill('0.1, x');
  await expect(check).toHaveText('values: "x" is not a number');

  // Two values × two seeds of 32 episodes (two versions a leg): its time is said before Start.
  await form.getByTestId('field-sweep-values').fill('0.1, 0.3');
  await form.getByTestId('field-sweep-seeds').fill('1, 2');
  await form.getByTestId('field-sweep-samples').fill('32');
  await expect(check).toHaveText(
    /^4 runs \(2 values × 2 seeds\) of 32 episodes, one after another: about \d+ s/,
  );
  await start.click();
  await untilLab(page, (l) => l.run.comparing, { timeout: 60_000 });
  const plan = await onLab(page, (l) => l.run.comparison?.plan.map((p) => `${p.field?.value} ${p.seed}`));
  expect(plan).toEqual(['0.1 1', '0.1 2', '0.3 1', '0.3 2']);
  await untilLab(page, (l) => !l.run.comparing, { timeout: 270_000 });
  await expect(page.getByTestId('run-error')).toHaveCount(0);
  const legs = await onLab(page, (l) => l.run.comparison?.legs ?? []);
  expect(legs.map((g) => `${g.field?.path} ${g.field?.value} ${g.seed}`)).toEqual([
    'learner.clipEps 0.1 1',
    'learner.clipEps 0.1 2',
    'learner.clipEps 0.3 1',
    'learner.clipEps 0.3 2',
  ]);

  const view = page.getByTestId('view-runs');
  await expect(view.getByTestId('field-sweep-status')).toHaveText('4 of 4 legs done');
  // The table: every leg, with its value and seed.
  await expect(view.getByTestId('run-compare-leg')).toHaveCount(4);
  await expect(view.getByTestId('compare-seed')).toHaveText(['1', '2', '1', '2']);
  // The chart: a point per value, the mean of its two seeds, with its ±1 sd bar and the band.
  const points = view.getByTestId('field-sweep-point');
  await expect(points).toHaveCount(2);
  await expect(view.getByTestId('field-sweep-sd')).toHaveCount(2);
  await expect(view.getByTestId('field-sweep-band')).toHaveCount(1);
  for (const [i, value] of [0.1, 0.3].entries()) {
    const [a = NaN, b = NaN] = legs
      .filter((g) => g.field?.value === value)
      .map((g) => g.success?.train ?? NaN);
    const mean = (a + b) / 2;
    await expect(points.nth(i)).toHaveAttribute('data-seeds', '2');
    expect(Number(await points.nth(i).getAttribute('data-mean'))).toBeCloseTo(mean, 3);
    const sd = Number(await points.nth(i).getAttribute('data-sd'));
    expect(sd).toBeCloseTo(Math.abs(a - b) / Math.SQRT2, 3);
  }
  await expect(view.getByTestId('field-sweep-train')).toHaveText([/^\d+% ± \d+%$/, /^\d+% ± \d+%$/]);
});

test('a sweep of a choice setting compares its choices: the update strategies, checked as typed', async ({
  page,
}) => {
  await openReady(page, QUERY);
  await openView(page, 'runs');
  const form = page.getByTestId('field-sweep-form');
  await form.getByTestId('field-sweep-field').selectOption('learner.strategy');
  const check = form.getByTestId('field-sweep-check');
  await form.getByTestId('field-sweep-values').fill('full, sideways');
  await expect(check).toContainText('One of: full, lora, frozen');
  await expect(check).toContainText('learner.strategy must be one of');
  await expect(form.getByTestId('field-sweep-start')).toBeDisabled();
  await form.getByTestId('field-sweep-values').fill('full, frozen, selective');
  await form.getByTestId('field-sweep-seeds').fill('1, 2, 3');
  await expect(check).toContainText('9 runs (3 values × 3 seeds)');
  await expect(form.getByTestId('field-sweep-start')).toBeEnabled();
  // The named comparisons fill the setting and its choices in one click.
  await form.getByTestId('field-sweep-compare').filter({ hasText: 'Scheduling' }).click();
  await expect(form.getByTestId('field-sweep-field')).toHaveValue('pipeline.schedule');
  await expect(form.getByTestId('field-sweep-values')).toHaveValue('learning-value, fifo, expected-reward');
  await expect(check).toContainText('9 runs (3 values × 3 seeds)');
  await form.getByTestId('field-sweep-compare').filter({ hasText: 'Strategies' }).click();
  await expect(form.getByTestId('field-sweep-field')).toHaveValue('learner.strategy');
  await expect(check).toContainText('12 runs (4 values × 3 seeds)');
  await expect(form.getByTestId('field-sweep-start')).toBeEnabled();
});
