import { expect, test } from '@playwright/test';
import { onLab } from './support/lab';
import { openReady } from './support/page';

// A learning rate 30× the default makes the gradient norm spike within a few dozen versions (the
// doctor bench's lr-high arm); the doctor's windows are shortened so it reads them within the run.
test('a run provoked with a learning rate 30× too high raises its finding on the first screen and marks the chart', async ({
  page,
}) => {
  await openReady(page, '?debug&backend=wasm&wcTimeout=3000');
  const config = {
    learner: { learningRate: 0.09 },
    doctor: { warmup: 10, spikeWindow: 20 },
  };
  await onLab(page, (lab, c) => lab.run.start({ maxIterations: 24, evalEvery: 8, config: c }), config);
  await expect(page.getByTestId('run-iteration')).toHaveText('24', { timeout: 240_000 });
  const strip = page.getByTestId('doctor-strip');
  await expect(strip).toBeVisible();
  await expect(strip).toContainText('Doctor');
  await strip.locator('summary').click();
  const ids = await strip.getByTestId('doctor-finding').evaluateAll((els) => els.map((e) => e.dataset.id));
  const expected = [
    'grad-spikes',
    'non-finite',
    'steps-too-large',
    'loss-volatile',
    'value-diverging',
    'falling',
  ];
  expect(ids.some((id) => expected.includes(id ?? ''))).toBe(true);
  await expect(strip.getByTestId('doctor-finding').first()).toContainText('What to change:');
  // Each finding fired is a mark on the success chart at its version, within the run.
  const marks = (await page.getByTestId('success-plot').getAttribute('data-marks')) ?? '';
  expect(
    marks
      .split(' ')
      .filter(Boolean)
      .map(Number)
      .every((v) => v >= 10 && v <= 24),
  ).toBe(true);
  expect(marks).not.toBe('');
});
