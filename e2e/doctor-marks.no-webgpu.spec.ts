import { expect, test } from '@playwright/test';

// The doctor's findings as marks, from a finding history laid on the page's run state (`?debug`):
// a run that provokes findings takes minutes; which marks and where is unit-tested in view/.
test('each of the doctor’s findings is a mark on the success chart and the timeline', async ({ page }) => {
  await page.goto('./?debug');
  await expect(page.getByTestId('success-plot')).toHaveAttribute('data-marks', '');
  await page.evaluate(() => {
    const run = window.__lab?.run;
    if (!run) throw new Error('no window.__lab');
    const t0 = Date.now() - 60_000;
    run.evals = Array.from({ length: 11 }, (_, i) => ({
      iteration: i * 20,
      seconds: i * 5,
      episodes: i * 100,
      level: 'easy' as const,
      suite: null,
      successTrain: i / 10,
      successHeldOut: i / 20,
      successGeneralisation: null,
      meanRewardTrain: i / 10,
    }));
    // The store published versions 0–199, one every 250 ms.
    run.events = Array.from({ length: 200 }, (_, v) => ({
      lane: 'store' as const,
      kind: 'publish' as const,
      t0: t0 + v * 250,
      t1: t0 + v * 250 + 5,
      version: v,
    }));
    const finding = (id: 'stagnant' | 'saturated', severity: 'warning' | 'info', title: string) => ({
      id,
      severity,
      version: 0,
      title,
      evidence: [],
      meaning: '',
      advice: '',
    });
    run.findingHistory = [
      {
        id: 'stagnant',
        firedAt: 60,
        withdrawnAt: 90,
        finding: finding('stagnant', 'warning', 'Learning has stalled'),
      },
      {
        id: 'saturated',
        firedAt: 150,
        withdrawnAt: null,
        finding: finding('saturated', 'info', 'The level is too easy'),
      },
      // A version the timeline's events no longer hold: on the chart only.
      {
        id: 'stagnant',
        firedAt: 250,
        withdrawnAt: null,
        finding: finding('stagnant', 'warning', 'Learning has stalled'),
      },
    ];
  });
  await expect(page.getByTestId('success-plot')).toHaveAttribute('data-marks', '60 150 250');
  await expect(page.getByTestId('timeline')).toHaveAttribute('data-findings', '2');
  await expect(page.getByTestId('legend-finding')).toBeVisible();
  await expect(page.getByTestId('timeline-canvas')).toHaveAttribute(
    'aria-label',
    /findings marked: ⚠ Learning has stalled \(version 60\), ℹ The level is too easy \(version 150\)\./,
  );
});
