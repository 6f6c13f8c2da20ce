import { AxeBuilder } from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { onLab } from './support/lab';
import { openReady } from './support/page';
import { openView } from './support/views';

/** The policy's tensors as the trainer names them (2 blocks). */
const TENSORS = [
  'tok_emb',
  'pos_emb',
  ...[0, 1].flatMap((l) =>
    [
      'ln1.g',
      'ln1.b',
      'attn.wqkv',
      'attn.bqkv',
      'attn.wo',
      'attn.bo',
      'ln2.g',
      'ln2.b',
      'mlp.w1',
      'mlp.b1',
      'mlp.w2',
      'mlp.b2',
    ].map((n) => `h${l}.${n}`),
  ),
  'ln_f.g',
  'ln_f.b',
  'head.w',
  'value.w',
  'value.b',
];

/**
 * Step reports of a run of `versions` versions with importance measured every 10 (in the page,
 * through `?debug`): the seed's measure for every tensor, the gradient one for the trained half.
 */
async function showSteps(page: Page, versions: number): Promise<void> {
  await onLab(
    page,
    (lab, { versions, tensors }) => {
      const metrics = {
        step: 1,
        lossKind: 'decoupled' as const,
        loss: 0.1,
        pgLoss: 0.1,
        valueLoss: 0.2,
        entropy: 1,
        gradNorm: 0.5,
        approxKl: 0.001,
        clipFrac: 0,
        wMean: 1,
        wMax: 1,
        maskedFrac: 0,
        lagKl: 0,
        learningRate: 0.003,
        ms: 100,
      };
      const steps = Array.from({ length: versions }, (_, i) => {
        const version = i + 1;
        const measured = version % 10 === 0;
        const seed = Object.fromEntries(tensors.map((n, k) => [n, ((k * 7 + version) % 23) / 22]));
        const gradient = Object.fromEntries(
          tensors.filter((_, k) => k % 2 === 0).map((n, k) => [n, (k % 5) / 4]),
        );
        return {
          version,
          episodes: 16,
          meanReturn: 0.5,
          success: 0.5,
          staleness: [0],
          loss: 0.1,
          metrics,
          waitMs: 10,
          trainMs: 100,
          at: Date.now(),
          strategy: {
            version: i,
            strategy: 'full' as const,
            rate: 0.003,
            tensorsTrained: tensors.length,
            tensors: tensors.length,
            performance: { current: 0.5, trend: 0, average: 0.5, stability: 1, count: 4 },
            ...(measured ? { importance: { seed, gradient } } : {}),
          },
        };
      });
      lab.run.steps = steps;
      const t = Date.now();
      lab.run.events = [
        { lane: 'store', kind: 'publish', t0: t - 2000, t1: t - 2000, version: 1 },
        {
          lane: 'trainer',
          kind: 'strategy',
          t0: t - 1000,
          t1: t - 1000,
          version: 1,
          meta: { from: 'full', to: 'selective', reason: 'poor and falling' },
        },
      ];
    },
    { versions, tensors: TENSORS },
  );
}

async function seriousViolations(page: Page): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page })
    .include('[data-testid="importance-heatmap"]')
    .analyze();
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id}: ${v.help} — ${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 3)
          .join(', ')}`,
    );
}

for (const size of [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
]) {
  test(`the importance heat map at ${size.width} × ${size.height}: grouped rows, thinned columns, both measures, keyboard, axe`, async ({
    page,
  }) => {
    await page.setViewportSize(size);
    await openReady(page, '?debug&backend=wasm&wcTimeout=1');
    await showSteps(page, 600); // 60 measured versions: thinned to 48 columns
    // The strategy switch is a mark of its own, listed in the timeline's legend.
    await expect(page.getByRole('list', { name: 'Legend' }).first()).toContainText('strategy switch (auto)');
    await openView(page, 'figures');
    const map = page.getByTestId('importance-heatmap');
    await expect(map).toBeVisible();
    const table = map.getByRole('table');
    await expect(table.locator('thead th')).toHaveCount(49);
    for (const group of ['Embeddings', 'Block 0 · attention', 'Block 1 · MLP', 'Heads'])
      await expect(table.locator('th.group', { hasText: group })).toBeVisible();
    await expect(map.locator('#importance-summary')).toContainText('48 of 60 measured');
    // Keyboard: focus the map, move a cell, hear its value.
    await map.getByRole('region').focus();
    await page.keyboard.press('ArrowDown');
    await expect(page.getByTestId('importance-readout')).toHaveText(/^tok_emb at version 600: \d\.\d\d$/);
    await page.keyboard.press('ArrowDown');
    await expect(page.getByTestId('importance-readout')).toHaveText(/^pos_emb at version 600/);
    // The gradient measure: the tensors it skipped are not measured.
    await map.getByLabel(/gradient/).check();
    await expect(map.locator('td.none').first()).toBeVisible();
    await expect(map.locator('caption')).toContainText('gradient');
    expect(await seriousViolations(page)).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(size.width);
    await map.screenshot({ path: `test-results/screenshots/importance-${size.width}x${size.height}.png` });
  });
}
