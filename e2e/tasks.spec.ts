import { expect, test, type Page } from '@playwright/test';
import type { TimelineEvent } from '../src/lib/pipeline/events.ts';
import { overlapMs } from '../src/lib/stats/metrics.ts';
import { MARKS, maxVersionsInFlight, type MarkKind } from '../src/lib/view/timeline-view.ts';
import { onLab } from './support/lab';
import { expectNoSidewaysScroll, keepWorkers, terminateWorker } from './support/page';
import type { ViewId } from './support/views';

/** A small valid suite: four easy tasks, all reachable by the brute-force search (≤ 3 tokens). */
const tasks = [
  ['plus-one', (x: number) => x + 1],
  ['double', (x: number) => 2 * x],
  ['seven', () => 7],
  ['minus-two', (x: number) => x - 2],
] as const;
const SUITE = {
  name: 'e2e suite',
  tasks: tasks.map(([id, f]) => ({
    id,
    level: 'easy',
    examples: [1, 2, 4].map((x) => ({ input: x, output: f(x) })),
    hidden: [0, 3, 9].map((x) => ({ input: x, output: f(x) })),
  })),
};

/**
 * Opens the page on one of its views (the Tasks view unless told) with a fast CPU-side trainer
 * backend: these tests are about tasks, not WebGPU.
 */
async function open(page: Page, flags = '', view: ViewId = 'tasks'): Promise<void> {
  await page.goto(`./?backend=wasm&wcTimeout=3000${flags}#${view}`);
  await expect(page.getByTestId(`view-${view}`)).toBeVisible();
  await expect(page.getByTestId('suite-select').locator('option')).not.toHaveCount(0);
}

/** The custom-environment panel (its own view) trains through the trainer worker: wait until it is ready. */
async function openWithTrainer(page: Page, flags = ''): Promise<void> {
  await open(page, flags, 'custom');
  await expect(page.getByTestId('trainer-status')).toHaveText('ready', { timeout: 120_000 });
}

async function importText(page: Page, name: string, text: string): Promise<void> {
  await page
    .getByTestId('suite-import')
    .setInputFiles({ name, mimeType: 'application/json', buffer: Buffer.from(text) });
}

test('import a suite file, evaluate it against the baselines, see the table', async ({ page }) => {
  await open(page);
  await importText(page, 'suite.json', JSON.stringify(SUITE));
  await expect(page.getByTestId('tasks-notice')).toContainText('Imported "e2e suite": 4 tasks');
  await expect(page.getByTestId('suite-select')).toHaveValue('e2e suite');
  await expect(page.getByTestId('suite-counts')).toHaveText('4 tasks, 4 held out');

  // By keyboard: Evaluate disables itself while it runs; focus goes to Stop, and back to Evaluate
  // when the evaluation ends by itself (it dropped to the page).
  await page.getByTestId('evaluate').focus();
  await page.keyboard.press('Enter');
  const table = page.getByTestId('eval-table');
  await expect(table).toBeVisible({ timeout: 120_000 });
  await expect(page.getByTestId('evaluate')).toBeFocused();
  const row = (agent: string, mode: string) =>
    table.locator(`tr[data-agent="${agent}"][data-mode="${mode}"][data-split="heldOut"][data-level="all"]`);
  for (const [agent, mode] of [
    ['random', 'sampled'],
    ['untrained', 'greedy'],
    ['untrained', 'sampled'],
    ['bruteforce', 'sampled'],
  ] as const) {
    await expect(row(agent, mode)).toHaveCount(1);
  }
  // Brute force finds every one of these short programs; its runs per task are counted.
  await expect(row('bruteforce', 'sampled').getByTestId('success')).toHaveText('100%');
  // It searches rather than samples, and its turns are its runs, counted in their own column.
  // Its widest column scrolls inside the panel, not the page.
  await expectNoSidewaysScroll(page);
  await expect(row('bruteforce', 'sampled').locator('td').nth(1)).toHaveText('search');
  await expect(row('bruteforce', 'sampled').locator('td').nth(6)).toHaveText('—');
  const runs = Number(await row('bruteforce', 'sampled').locator('td').last().textContent());
  expect(runs).toBeGreaterThan(1);
  // The imported suite survives a reload (IndexedDB `tasks` store).
  await page.reload();
  await expect(page.getByTestId('suite-select').locator('option', { hasText: 'e2e suite' })).toHaveCount(1);
});

test('importing a suite over a saved one of the same name asks first; declining keeps the saved one', async ({
  page,
}) => {
  await open(page);
  await importText(page, 'suite.json', JSON.stringify(SUITE));
  await expect(page.getByTestId('suite-counts')).toHaveText('4 tasks, 4 held out');
  const smaller = JSON.stringify({ ...SUITE, tasks: SUITE.tasks.slice(0, 1) });
  const asked: string[] = [];
  page.once('dialog', (d) => {
    asked.push(d.message());
    void d.dismiss();
  });
  await importText(page, 'smaller.json', smaller);
  await expect(page.getByTestId('tasks-notice')).toHaveText(
    'smaller.json was not imported: kept the saved "e2e suite"',
  );
  expect(asked).toEqual([
    'Replace the saved suite "e2e suite" (4 tasks) with the one in smaller.json (1 task)? The saved one cannot be brought back.',
  ]);
  await expect(page.getByTestId('suite-counts')).toHaveText('4 tasks, 4 held out');
  page.once('dialog', (d) => void d.accept());
  await importText(page, 'smaller.json', smaller);
  await expect(page.getByTestId('tasks-notice')).toContainText('Replaced "e2e suite": 1 task');
  await expect(page.getByTestId('suite-counts')).toHaveText('1 task, 1 held out');
  // A bad file's error does not sit beside the last import's notice.
  await importText(page, 'bad.json', '{');
  await expect(page.getByTestId('import-error')).toBeVisible();
  await expect(page.getByTestId('tasks-notice')).toHaveCount(0);
});

test('an evaluation refuses a bad sample count, can be stopped, and the next one runs', async ({ page }) => {
  await open(page);
  for (const bad of ['0', '2.5', '1000']) {
    await page.getByTestId('eval-samples').fill(bad);
    await page.getByTestId('evaluate').click();
    await expect(page.getByTestId('eval-error')).toHaveText(
      `samples per task must be a whole number from 1 to 16, got ${bad}`,
    );
    await expect(page.getByTestId('eval-table')).toHaveCount(0);
  }
  // The built-in suite (258 tasks) at 16 samples takes minutes: stop it once it has begun.
  await page.getByTestId('eval-samples').fill('16');
  await page.getByTestId('evaluate').click();
  await expect(page.getByTestId('eval-progress')).toContainText(/episodes/, { timeout: 120_000 });
  await page.getByTestId('eval-stop').click();
  await expect(page.getByTestId('eval-error')).toHaveText('evaluation stopped; nothing from it is shown');
  await expect(page.getByTestId('eval-table')).toHaveCount(0);
  await expect(page.getByTestId('evaluate')).toBeEnabled();
  await expect(page.getByTestId('eval-stop')).toBeDisabled();
  // Stopped once an agent has finished, the table keeps that agent's rows, and says it stopped.
  await page.getByTestId('eval-samples').fill('1');
  await page.getByTestId('evaluate').click();
  await expect(page.getByTestId('eval-progress')).toContainText('untrained', { timeout: 120_000 });
  await page.getByTestId('eval-stop').click();
  await expect(page.getByTestId('eval-error')).toHaveText(
    'evaluation stopped; the table shows what it finished: random (sampled)',
  );
  await expect(page.getByTestId('eval-of')).toContainText('(stopped: the agents it finished)');
  const agents = await page.getByTestId('eval-table').locator('tbody tr td:first-child').allTextContents();
  expect(agents.length).toBeGreaterThan(0);
  expect(new Set(agents.map((a) => a.trim()))).toEqual(new Set(['random']));
  // A fresh worker takes the next evaluation.
  await importText(page, 'suite.json', JSON.stringify(SUITE));
  await page.getByTestId('eval-samples').fill('1');
  await page.getByTestId('evaluate').click();
  await expect(page.getByTestId('eval-table')).toBeVisible({ timeout: 120_000 });
  await expect(page.getByTestId('eval-error')).toHaveCount(0);
  await expect(page.getByTestId('eval-of')).toHaveText('"e2e suite": 4 tasks, 1 sample per task');
});

test('a bad suite file is rejected whole with its first problem and path; nothing changes', async ({
  page,
}) => {
  await open(page);
  const select = page.getByTestId('suite-select');
  const before = await select.locator('option').allTextContents();
  const selected = await select.inputValue();
  const first = SUITE.tasks[0];
  const bad: [string, string, RegExp][] = [
    ['not-json.json', '{ "name": "x", "tasks": [', /not valid JSON/],
    ['no-tasks.json', JSON.stringify({ name: 'x' }), /\$\.tasks/],
    [
      'non-finite.json',
      JSON.stringify(SUITE).replace('"output":2', '"output":1e999'),
      /\$\.tasks\[0\]\.examples\[0\]\.output/,
    ],
    [
      'duplicate.json',
      JSON.stringify({ name: 'x', tasks: [first, first] }),
      /\$\.tasks\[1\]\.id.*duplicate/i,
    ],
    [
      'empty-tests.json',
      JSON.stringify({ name: 'x', tasks: [{ ...first, hidden: [] }] }),
      /\$\.tasks\[0\]\.hidden/,
    ],
    [
      'bad-level.json',
      JSON.stringify({ name: 'x', tasks: [{ ...first, level: 'expert' }] }),
      /\$\.tasks\[0\]\.level/,
    ],
  ];
  for (const [name, text, message] of bad) {
    await importText(page, name, text);
    await expect(page.getByTestId('import-error')).toContainText(`${name} was not imported`);
    await expect(page.getByTestId('import-error')).toContainText(message);
    expect(await select.locator('option').allTextContents()).toEqual(before);
    await expect(select).toHaveValue(selected);
  }
});

test('a suite import refused by a full storage quota says the storage is full; nothing changes', async ({
  page,
}) => {
  await open(page);
  const select = page.getByTestId('suite-select');
  const before = await select.locator('option').allTextContents();
  // Chromium's QuotaExceededError has an empty message: the page must still say what happened.
  const usage = await page.evaluate(async () => (await navigator.storage.estimate()).usage ?? 0);
  const cdp = await page.context().newCDPSession(page);
  const origin = new URL(page.url()).origin;
  await cdp.send('Storage.overrideQuotaForOrigin', { origin, quotaSize: usage + 1000 });
  const big = {
    name: 'too big to store',
    tasks: Array.from({ length: 400 }, (_, i) => ({ ...SUITE.tasks[i % 4], id: `t${i}` })),
  };
  try {
    await importText(page, 'big.json', JSON.stringify(big));
    await expect(page.getByTestId('import-error')).toContainText('big.json was not imported: ');
    await expect(page.getByTestId('import-error')).toContainText(
      "this site's storage in the browser is full",
    );
    expect(await select.locator('option').allTextContents()).toEqual(before);
  } finally {
    await cdp.send('Storage.overrideQuotaForOrigin', { origin });
  }
});

test('when the code editor cannot load, a plain text box stands in and what is written there is used', async ({
  page,
}) => {
  // CodeMirror loads on demand; a chunk that fails to load left a blank editor nobody could type in.
  await page.route('**/assets/code-theme-*.js', (route) => route.abort());
  await open(page);
  await expect(page.getByTestId('task-editor-failed')).toContainText('The code editor did not load');
  const box = page.getByTestId('task-editor');
  await expect(box).toHaveValue(/"examples"/); // the editor's text is there
  const task = {
    id: 'plain-box',
    level: 'easy',
    examples: [1, 2, 4].map((x) => ({ input: x, output: 2 * x })),
    hidden: [0, 3].map((x) => ({ input: x, output: 2 * x })),
  };
  await box.fill(JSON.stringify(task));
  await page.getByTestId('task-program').fill('2*x');
  await page.getByTestId('task-try').click();
  await expect(page.getByTestId('task-passed')).toHaveText('5/5 tests pass');
});

test('what is written in the editors is still there after a reload', async ({ page }) => {
  await open(page);
  await page.getByTestId('task-program').fill('x*x+7');
  const editor = page.getByTestId('task-editor').locator('.cm-content');
  await editor.click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.insertText('{ "id": "kept", "level": "easy" }');
  await page.reload();
  await expect(page.getByTestId('suite-select').locator('option')).not.toHaveCount(0);
  await expect(page.getByTestId('task-program')).toHaveValue('x*x+7');
  await expect(page.getByTestId('task-editor')).toContainText('"id": "kept"');
});

test('write a task in the editor, try a program on it, add it to my tasks', async ({ page }) => {
  await open(page);
  await page.getByTestId('task-program').fill('3*x-2');
  await page.getByTestId('task-try').click();
  await expect(page.getByTestId('task-passed')).toHaveText('7/7 tests pass');
  await page.getByTestId('task-program').fill('3*x');
  await page.getByTestId('task-try').click();
  await expect(page.getByTestId('task-passed')).toHaveText('0/7 tests pass');
  await expect(page.getByTestId('task-run-error')).toHaveCount(0);
  // Right except at 0 (0/0): that row says so by itself, the others their values, and since an
  // episode runs every test at once and fails, none passes.
  await page.getByTestId('task-program').fill('3*x/x*x-2');
  await page.getByTestId('task-try').click();
  await expect(page.getByTestId('task-run-error')).toContainText('the program fails (output: f(0) is NaN)');
  await expect(page.getByTestId('task-results').locator('tbody tr').first()).toContainText('1');
  await expect(page.getByTestId('task-results').locator('tr', { hasText: 'f(0) is NaN' })).toHaveCount(1);
  await expect(page.getByTestId('task-passed')).toHaveText('0/7 tests pass');
  await page.getByTestId('task-program').fill('x +');
  await page.getByTestId('task-try').click();
  await expect(page.getByTestId('task-results')).toContainText('syntax');
  await expect(page.getByTestId('task-run-error')).toContainText('in (x) => (x +)');

  // Edit the task text in CodeMirror: a broken task is refused with the field named.
  const editor = page.getByTestId('task-editor').locator('.cm-content');
  await editor.click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.insertText(
    JSON.stringify({ id: 'sq', level: 'hard', examples: [{ input: 2, output: 4 }], hidden: [] }),
  );
  await page.getByTestId('task-add').click();
  await expect(page.getByTestId('task-error')).toContainText('task.hidden');
  await editor.click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.insertText(
    JSON.stringify({
      id: 'sq',
      level: 'hard',
      examples: [{ input: 2, output: 4 }],
      hidden: [{ input: 3, output: 9 }],
    }),
  );
  await page.getByTestId('task-add').click();
  await expect(page.getByTestId('tasks-notice')).toContainText('Added sq to "my tasks"');
  await expect(page.getByTestId('suite-select')).toHaveValue('my tasks');
  await expect(page.getByTestId('suite-counts')).toHaveText('1 task, 1 held out');
  // Adding it again replaces it, and says so.
  await page.getByTestId('task-add').click();
  await expect(page.getByTestId('tasks-notice')).toContainText('Replaced sq in "my tasks" (1 task)');
});

test('an MLP policy trains on the CartPole custom JS environment to a clearly better return than random', async ({
  page,
}) => {
  await openWithTrainer(page);
  await page.getByTestId('env-train').click();
  // Meanwhile the run panel says why its buttons are disabled.
  await expect(page.getByTestId('run-waiting')).toContainText('the custom environment holds it');
  await expect(page.getByTestId('env-report')).toBeVisible({ timeout: 150_000 });
  await expect(page.getByTestId('run-waiting')).toHaveCount(0);
  const random = Number(await page.getByTestId('env-random').textContent());
  const trained = Number(await page.getByTestId('env-trained').textContent());
  expect(random).toBeGreaterThan(5);
  expect(trained).toBeGreaterThan(2 * random);
  await expect(page.getByTestId('env-iterations')).toHaveText('after 40 iterations');
  // Its pipeline on the timeline: one version per iteration, versions 0–40 drawn once fitted (the
  // instant publish of version 0 at the window's very edge may or may not count as in view).
  const timeline = page.getByTestId('env-timeline');
  await timeline.getByTestId('timeline-fit').click();
  await expect(timeline.getByTestId('timeline')).toHaveAttribute('data-versions', /^4[01]$/);
  // Zooming out stops at twice the training's extent or the first window (20 s), the wider, its
  // versions still in view (twelve clicks once gave a window of a day, the run a sliver at one
  // edge, "0 versions in view").
  const fitted = Number(await timeline.getByTestId('timeline').getAttribute('data-span-ms'));
  for (let i = 0; i < 12; i++) await timeline.getByRole('button', { name: 'Zoom out' }).click();
  const zoomed = Number(await timeline.getByTestId('timeline').getAttribute('data-span-ms'));
  expect(zoomed).toBeGreaterThan(fitted);
  expect(zoomed).toBeLessThanOrEqual(Math.max(20_000, 2 * fitted));
  await expect(timeline.getByTestId('timeline')).toHaveAttribute('data-versions', /^4[01]$/);
  // The default η = 1 bounds how far the rollouts ran ahead of the trainer.
  expect(Number(await page.getByTestId('env-staleness-max').textContent())).toBeLessThanOrEqual(1);

  // The training is stored: its row, and its versions in IndexedDB (retention: the newest 5, and
  // versions 0, 10, 20, 30 and 40), each the MLP's every parameter.
  const row = page.getByTestId('env-training');
  await expect(row).toHaveCount(1);
  await expect(row.getByTestId('env-training-status')).toHaveText('finished');
  await expect(row.locator('td').nth(6)).toHaveText(trained.toFixed(1));
  const stored = await storedCustomVersions(page);
  expect(stored.versions).toEqual([0, 10, 20, 30, 36, 37, 38, 39, 40]);
  expect(stored.tensors).toEqual(['w1', 'b1', 'wp', 'bp', 'wv', 'bv']);
  // After a reload it is still there, apart from the code-writing runs; its code comes back.
  await page.reload();
  await expect(row.getByTestId('env-training-status')).toHaveText('finished');
  await expect(row.locator('td').nth(6)).toHaveText(trained.toFixed(1));
  await expect(page.getByTestId('run-list')).toHaveCount(0);
  await writeEnv(page, 'spec = { observations: 1, actions: 2, maxSteps: 1 };');
  await row.getByTestId('env-training-code').click();
  await expect(page.getByTestId('env-notice')).toHaveText(
    'The editor now holds the code training 1 trained on.',
  );
  await expect(page.getByTestId('env-editor')).toContainText('CartPole');
  // Delete asks first; dismissed, nothing is deleted. Confirmed, it takes its versions with it.
  page.once('dialog', (d) => void d.dismiss());
  await row.getByTestId('env-training-delete').click();
  await expect(row).toHaveCount(1);
  expect((await storedCustomVersions(page)).versions).toHaveLength(9);
  page.once('dialog', (d) => {
    expect(d.message()).toContain('Delete training 1');
    void d.accept();
  });
  await row.getByTestId('env-training-delete').click();
  await expect(page.getByTestId('env-notice')).toHaveText('Deleted training 1 and its 9 stored versions.');
  await expect(row).toHaveCount(0);
  expect((await storedCustomVersions(page)).versions).toEqual([]);
});

/** The stored versions of the page's custom-environment runs, and the tensors of the newest. */
async function storedCustomVersions(page: Page): Promise<{ versions: number[]; tensors: string[] }> {
  return page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const r = indexedDB.open('sandbox-rl-lab');
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
    type Stored = { runId: string; version: number; checkpoint: { params: { entries: { name: string }[] } } };
    const all = await new Promise<Stored[]>((resolve, reject) => {
      const r = db.transaction('weights').objectStore('weights').getAll();
      r.onsuccess = () => resolve(r.result as Stored[]);
      r.onerror = () => reject(r.error);
    });
    db.close();
    const custom = all.filter((w) => w.runId.startsWith('custom-'));
    return {
      versions: custom.map((w) => w.version).sort((a, b) => a - b),
      tensors: custom.at(-1)?.checkpoint.params.entries.map((e) => e.name) ?? [],
    };
  });
}

/** Replaces the custom environment's code in its editor. */
async function writeEnv(page: Page, code: string): Promise<void> {
  await page.getByTestId('env-editor').locator('.cm-content').click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.insertText(code);
}

/** Trains the custom environment with the panel's η, workers and iterations; returns its timeline. */
async function trainCustomEnv(page: Page, eta: number, workers: number, iterations: number) {
  await page.getByTestId('env-eta').fill(String(eta));
  await page.getByTestId('env-workers').fill(String(workers));
  await page.getByTestId('env-iterations-input').fill(String(iterations));
  await page.getByTestId('env-train').click();
  await expect(page.getByTestId('env-report')).toBeVisible({ timeout: 150_000 });
  await expect(page.getByTestId('env-iterations')).toHaveText(`after ${iterations} iterations`);
  return onLab(page, (lab) => ({ events: lab.customEnv.events, counters: lab.customEnv.counters }));
}

const isRollout = (e: TimelineEvent) => e.lane.startsWith('rollout') && e.kind === 'episode';
const isTraining = (e: TimelineEvent) => e.lane === 'trainer' && e.kind === 'train-step';

test('the custom environment trains through the async pipeline: η = 0 takes turns, η = 2 overlaps within its bound', async ({
  page,
}) => {
  await openWithTrainer(page, '&debug');
  const sync = await trainCustomEnv(page, 0, 1, 12);
  expect(sync.events.filter(isTraining)).toHaveLength(12);
  // A short training ends within the timeline's 20 s window: it is then shown whole, fitted.
  const timeline = page.getByTestId('env-timeline');
  await expect(timeline.getByTestId('timeline-follow')).toHaveAttribute('aria-pressed', 'false');
  await expect(timeline.getByTestId('timeline')).toHaveAttribute('data-versions', /^1[23]$/);
  // The timeline works from the keyboard too: F follows now, an arrow pans (and stops following),
  // + zooms in, A fits all again.
  const follow = timeline.getByTestId('timeline-follow');
  const status = timeline.locator('.status');
  await timeline.getByTestId('timeline-canvas').focus();
  await page.keyboard.press('f');
  await expect(follow).toHaveAttribute('aria-pressed', 'true');
  await page.keyboard.press('ArrowLeft');
  await expect(follow).toHaveAttribute('aria-pressed', 'false');
  const window0 = await status.textContent();
  await page.keyboard.press('+');
  await expect(status).not.toHaveText(window0 ?? '');
  await page.keyboard.press('a');
  await expect(timeline.getByTestId('timeline')).toHaveAttribute('data-versions', /^1[23]$/);
  expect(overlapMs(sync.events, isRollout, isTraining)).toBeLessThan(1);
  expect(maxVersionsInFlight(sync.events)).toBe(1);
  await expect(page.getByTestId('env-staleness-max')).toHaveText('0');

  const async = await trainCustomEnv(page, 2, 2, 24);
  // Both workers played, ahead of the trainer: rollout and training overlap, several versions in flight.
  expect(new Set(async.events.filter(isRollout).map((e) => e.lane))).toEqual(
    new Set(['rollout-0', 'rollout-1']),
  );
  expect(overlapMs(async.events, isRollout, isTraining)).toBeGreaterThan(50);
  expect(maxVersionsInFlight(async.events)).toBeGreaterThan(1);
  const max = Number(await page.getByTestId('env-staleness-max').textContent());
  expect(max).toBeGreaterThanOrEqual(1);
  expect(max).toBeLessThanOrEqual(2);
  // Versions published mid-episode were adopted mid-episode: interrupts, marked on the timeline
  // (an episode that adopted twice has two marks).
  const interrupts = async.counters?.interrupts ?? 0;
  expect(interrupts).toBeGreaterThan(0);
  expect(async.events.filter((e) => e.kind === 'interrupt').length).toBeGreaterThanOrEqual(interrupts);
  // The legend lists every mark this training made, and none it cannot make.
  const legend = timeline.getByRole('list', { name: 'Legend' });
  for (const kind of new Set(async.events.map((e) => e.kind)))
    if (kind in MARKS) await expect(legend).toContainText(MARKS[kind as MarkKind].label);
  for (const absent of ['preempt', 'evict', 'restart', 'requeue'])
    await expect(legend).not.toContainText(absent);
  // Both trainings stay in the comparison table, in order.
  const rows = page.getByTestId('env-trainings').locator('tbody tr');
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(0).locator('td').nth(2)).toHaveText('0');
  await expect(rows.nth(1).locator('td').nth(2)).toHaveText('2');
  await expect(rows.nth(1).locator('td').nth(4)).toHaveText('24');
  // The table scrolls inside its panel: it made the page ~1 360 px wide in a 1 280 px window.
  await expectNoSidewaysScroll(page);
});

test('Stop ends custom-environment training after the iteration in progress, with a report of what it trained', async ({
  page,
}) => {
  await openWithTrainer(page);
  await page.getByTestId('env-iterations-input').fill('500');
  // By keyboard: Train and Stop disable themselves, and focus goes on to the other, not to the page.
  await page.getByTestId('env-train').focus();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('env-stop')).toBeFocused();
  await expect(page.getByTestId('env-progress')).toContainText(/iteration [3-9]\/500|iteration \d\d+\/500/, {
    timeout: 60_000,
  });
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('env-report')).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId('env-train')).toBeFocused();
  const done = Number((await page.getByTestId('env-iterations').textContent())?.match(/\d+/)?.[0]);
  expect(done).toBeGreaterThanOrEqual(3);
  expect(done).toBeLessThan(500);
  await expect(page.getByTestId('env-train')).toBeEnabled();
  await expect(page.getByTestId('env-stop')).toBeDisabled();

  // Stop while it sets up: an environment whose reset() takes 60 ms needs ≥ 1.8 s for its
  // baselines (30 episodes). It ends without waiting for them, and says that nothing was trained.
  await writeEnv(
    page,
    'const spec = { observations: 1, actions: 2, maxSteps: 5 };\nfunction reset() { const t = Date.now(); while (Date.now() - t < 60) {} return [0]; }\nfunction step(a) { return { observation: [0], reward: a, done: false }; }',
  );
  await page.getByTestId('env-train').click();
  await expect(page.getByTestId('env-progress')).toContainText('setting up');
  // Its counter moves with each episode the setup plays.
  await expect(page.getByTestId('env-progress')).toContainText(
    /measuring random actions, episode [1-9]\d* of 20/,
  );
  await page.getByTestId('env-stop').click();
  await expect(page.getByTestId('env-notice')).toHaveText(
    'Stopped before the first update: nothing was trained.',
    {
      timeout: 10_000,
    },
  );
  await expect(page.getByTestId('env-report')).toHaveCount(0);
  await expect(page.getByTestId('env-train')).toBeEnabled();
  // The stopped training is stored as far as it went; the one that trained nothing is not.
  const rows = page.getByTestId('env-training');
  await expect(rows).toHaveCount(1);
  await expect(rows.locator('td').nth(4)).toHaveText(`${done} of 500`);
  // Measured after the Stop, short of its 500 iterations: "stopped", not "finished".
  await expect(rows.getByTestId('env-training-status')).toHaveText('stopped');
});

test('a custom training whose rollout worker is gone without a word: Stop now ends it, and what was stored stays', async ({
  page,
}) => {
  await keepWorkers(page);
  await openWithTrainer(page);
  await page.getByTestId('env-iterations-input').fill('500');
  await page.getByTestId('env-train').click();
  await expect(page.getByTestId('env-progress')).toContainText(/iteration [3-9]\/500|iteration \d\d+\/500/, {
    timeout: 60_000,
  });
  await terminateWorker(page, 'rollout-custom-0');
  await page.getByTestId('env-stop').click();
  await expect(page.getByTestId('env-stop')).toHaveText('Stop now');
  await page.getByTestId('env-stop').click();
  // Not an error: the user ended it. The trainer answered, so it was not restarted.
  await expect(page.getByTestId('env-notice')).toHaveText(
    /^Stopped at once while .+: that was given up\. The training is stored up to version \d+: Resume goes on from there\.$/,
    { timeout: 30_000 },
  );
  await expect(page.getByTestId('env-error')).toHaveCount(0);
  await expect(page.getByTestId('env-stop')).toBeDisabled();
  await expect(page.getByTestId('env-train')).toBeEnabled();
  // The training is stored as far as it went, as stopped, and can go on.
  const rows = page.getByTestId('env-training');
  await expect(rows).toHaveCount(1);
  await expect(rows.locator('td').nth(4)).toHaveText(/^([3-9]|\d\d+) of 500$/);
  await expect(rows.getByTestId('env-training-status')).toHaveText('stopped');
  await expect(rows.getByRole('button', { name: /resume/i })).toBeEnabled();
});

test('a custom training whose trainer is gone without a word: Stop now starts the trainer again, and says so', async ({
  page,
}) => {
  await keepWorkers(page);
  await openWithTrainer(page);
  await page.getByTestId('env-iterations-input').fill('500');
  await page.getByTestId('env-train').click();
  await expect(page.getByTestId('env-progress')).toContainText(/iteration [3-9]\/500|iteration \d\d+\/500/, {
    timeout: 60_000,
  });
  await terminateWorker(page, 'trainer');
  await page.getByTestId('env-stop').click();
  await page.getByTestId('env-stop').click(); // Stop now
  await expect(page.getByTestId('env-notice')).toHaveText(
    /^Stopped at once while .+: that was given up, and the trainer worker, which did not answer, starts again\. The training is stored up to version \d+: Resume goes on from there\.$/,
    { timeout: 30_000 },
  );
  // The new trainer worker is ready, and the page can train again.
  await expect(page.getByTestId('trainer-status')).toHaveText('ready', { timeout: 120_000 });
  await expect(page.getByTestId('env-train')).toBeEnabled();
  await expect(page.getByTestId('env-training').getByTestId('env-training-status')).toHaveText('stopped');
});

test('a custom training interrupted by a reload resumes from its newest stored version up to the iterations asked', async ({
  page,
}) => {
  await openWithTrainer(page, '&debug');
  await page.getByTestId('env-iterations-input').fill('24');
  await page.getByTestId('env-train').click();
  await expect(page.getByTestId('env-progress')).toContainText(/iteration ([5-9]|1\d)\/24/, {
    timeout: 90_000,
  });
  await page.reload();
  const row = page.getByTestId('env-training');
  await expect(row.getByTestId('env-training-status')).toHaveText('interrupted');
  const cell = await row.locator('td').nth(4).textContent();
  const from = Number(cell?.match(/^(\d+) of 24$/)?.[1]);
  expect(from).toBeGreaterThanOrEqual(5);
  expect(from).toBeLessThan(24);
  // The baselines were stored when measured: the random return is in the row already.
  const random = Number(await row.locator('td').nth(5).textContent());
  expect(random).toBeGreaterThan(5);
  await expect(page.getByTestId('trainer-status')).toHaveText('ready', { timeout: 120_000 });
  await row.getByTestId('env-training-resume').click();
  await expect(page.getByTestId('env-progress')).toContainText(`resumed from version ${from}`);
  await expect(page.getByTestId('env-report')).toBeVisible({ timeout: 150_000 });
  await expect(page.getByTestId('env-iterations')).toHaveText('after 24 iterations');
  // Its chart starts after the version it resumed from: no version trained twice.
  const versions = await onLab(page, (lab) => lab.customEnv.history.map((h) => h.version));
  expect(versions[0]).toBe(from + 1);
  expect(versions.at(-1)).toBe(24);
  // One row, finished, with the baselines measured before the reload.
  await expect(row).toHaveCount(1);
  await expect(row.getByTestId('env-training-status')).toHaveText('finished');
  await expect(row.locator('td').nth(4)).toHaveText('24');
  await expect(row.locator('td').nth(5)).toHaveText(random.toFixed(1));
  await expect(page.getByTestId('env-random')).toHaveText(random.toFixed(1));
  await expect(row.getByTestId('env-training-resume')).toHaveCount(0);
  // Every version is where retention keeps it: 0, 10, 20 and the newest 5.
  expect((await storedCustomVersions(page)).versions).toEqual([0, 10, 20, 21, 22, 23, 24]);
});

test('a resume stopped while it sets up leaves the stored training as it was', async ({ page }) => {
  await openWithTrainer(page);
  // reset() takes 60 ms: the setup's 20 random episodes take over a second, time to Stop in.
  await writeEnv(
    page,
    'const spec = { observations: 1, actions: 2, maxSteps: 3 };\nfunction reset() { const t = Date.now(); while (Date.now() - t < 60) {} return [0]; }\nfunction step(a) { return { observation: [0], reward: a, done: false }; }',
  );
  await page.getByTestId('env-iterations-input').fill('500');
  await page.getByTestId('env-train').click();
  await expect(page.getByTestId('env-progress')).toContainText(/iteration [1-9]\d*\/500/, {
    timeout: 60_000,
  });
  await page.reload(); // the page closes while it trains
  const row = page.getByTestId('env-training');
  await expect(row.getByTestId('env-training-status')).toHaveText('interrupted');
  const cells = async () => (await row.locator('td').allTextContents()).slice(4, 8);
  const before = await cells();
  expect(before[0]).toMatch(/^\d+ of 500$/);
  await expect(page.getByTestId('trainer-status')).toHaveText('ready', { timeout: 120_000 });
  await row.getByTestId('env-training-resume').click();
  await expect(page.getByTestId('env-progress')).toContainText(/measuring random actions, episode [1-9]/);
  await page.getByTestId('env-stop').click();
  await expect(page.getByTestId('env-notice')).toHaveText(
    'Stopped before the first update: nothing was trained.',
    {
      timeout: 10_000,
    },
  );
  // Its iterations, returns and status are those it had (interrupted, not "elsewhere": the lock
  // this page held was its own), and after a reload too.
  await expect.poll(cells).toEqual(before);
  await expect(row.getByTestId('env-training-resume')).toBeEnabled();
  await page.reload();
  await expect(row.getByTestId('env-training-status')).toHaveText('interrupted');
  expect(await cells()).toEqual(before);
});

test('another tab sees a custom training in progress as such, and cannot delete it', async ({
  page,
  context,
}) => {
  await openWithTrainer(page);
  await page.getByTestId('env-iterations-input').fill('500');
  await page.getByTestId('env-train').click();
  await expect(page.getByTestId('env-progress')).toContainText(/iteration [1-9]/, { timeout: 60_000 });
  const other = await context.newPage();
  await open(other, '', 'custom');
  const row = other.getByTestId('env-training');
  await expect(row.getByTestId('env-training-status')).toHaveText('elsewhere');
  await expect(row.getByTestId('env-training-delete')).toBeDisabled();
  await page.getByTestId('env-stop').click();
  await expect(page.getByTestId('env-report')).toBeVisible({ timeout: 60_000 });
  // The other tab's table follows without a reload (the training's lock was let go).
  await expect(row.getByTestId('env-training-status')).toHaveText(/^(stopped|finished)$/);
  await expect(row.getByTestId('env-training-delete')).toBeEnabled();
});

test('a broken custom environment gets a clear message', async ({ page }) => {
  await openWithTrainer(page);
  await writeEnv(
    page,
    'const spec = { observations: 2, actions: 2, maxSteps: 10 };\nfunction reset() { return [0]; }\nfunction step(a) { return {}; }',
  );
  await page.getByTestId('env-train').click();
  await expect(page.getByTestId('env-error')).toContainText('reset() must be an array of 2 finite numbers');
  // A syntax error says where it is.
  await writeEnv(
    page,
    'const spec = { observations: 1, actions: 2, maxSteps: 10 };\nfunction reset() { return [0; }',
  );
  await page.getByTestId('env-train').click();
  await expect(page.getByTestId('env-error')).toContainText(/SyntaxError: .+ \(line 2, column \d+\)/);

  // One that fails mid-training (the setup's baselines take at most 600 calls): training stops with
  // its message, which names the call; the panel is ready for the next.
  await writeEnv(
    page,
    'const spec = { observations: 1, actions: 2, maxSteps: 20 };\nlet n = 0, calls = 0;\nfunction reset() { n = 0; return [n]; }\nfunction step(a) { if (++calls === 1000) throw new Error("boom"); n += 1; return { observation: [n], reward: a, done: n >= 20 }; }',
  );
  await page.getByTestId('env-train').click();
  await expect(page.getByTestId('env-error')).toHaveText(
    /^training stopped: the environment's code failed \(runtime\): step\([01]\): .*boom \(line 4, column \d+\)/,
    { timeout: 60_000 },
  );
  await expect(page.getByTestId('env-report')).toHaveCount(0);
  await expect(page.getByTestId('env-train')).toBeEnabled();
  // It is stored as failed, with the versions it published; the two that never started are not.
  await expect(page.getByTestId('env-training')).toHaveCount(1);
  await expect(page.getByTestId('env-training-status')).toHaveText('failed');
});
