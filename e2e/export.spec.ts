import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { readSafetensors } from '../src/lib/export/safetensors.ts';
import { unzipFiles, zipFiles } from '../src/lib/export/zip.ts';
import { onLab, untilLab } from './support/lab';
import { openReady } from './support/page';
import { openView } from './support/views';

// The second test checks the first one's download with Python: in order, and only after it passed.
test.describe.configure({ mode: 'serial' });

/** The Python env `cluster/setup.sh` makes (`npm run test:cluster`), or `CLUSTER_VENV`'s. */
const python = path.join(process.env.CLUSTER_VENV ?? '.venv-cluster', 'bin', 'python');

/** The page's export, unzipped into a temp folder by the first test; removed after the file's tests. */
let exported: string | null = null;
test.afterAll(() => {
  if (exported) rmSync(exported, { recursive: true, force: true });
});

const stored = (page: Page) => onLab(page, (l) => l.run.runs.map((r) => r.id).sort());

/** Chooses `files` in the import's file input and waits for what the page says of them. */
async function importFiles(page: Page, files: Map<string, Uint8Array>, ok: boolean): Promise<string> {
  const said = page.getByTestId('run-transfer');
  // What the line said before: the answer to this import is the line once it says something else.
  const before = (await said.count()) > 0 ? await said.textContent() : null;
  await page.getByTestId('import-model-files').setInputFiles(
    [...files].map(([name, bytes]) => ({
      name,
      mimeType: 'application/octet-stream',
      buffer: Buffer.from(bytes),
    })),
  );
  if (before !== null) await expect(said).not.toHaveText(before);
  await expect(said).toHaveAttribute('data-ok', String(ok));
  return (await said.textContent()) ?? '';
}

test('a run exports as a zip for a cluster; a GPT-2 folder imports as a start point, a bad one is refused', async ({
  page,
}) => {
  test.setTimeout(300_000);
  await openReady(page, '?debug&backend=wasm&wcTimeout=1');
  await onLab(page, (l) => l.run.start({ maxIterations: 2, evalEvery: 0 }));
  await untilLab(page, (l) => !l.run.running && l.run.runs.some((r) => r.latestVersion >= 1), {
    timeout: 180_000,
  });
  await openView(page, 'runs');
  const [runId] = await stored(page);

  // Export: the zip downloads, with the GPT-2 folder, the tasks, the trajectories, the config.
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId('run-export').first().click(),
  ]);
  expect(download.suggestedFilename()).toMatch(new RegExp(`^${runId}-v\\d+\\.zip$`));
  const folder = await unzipFiles(new Uint8Array(readFileSync(await download.path())));
  expect([...folder.keys()].sort()).toEqual(
    [
      'README.md',
      'config.json',
      'generation_config.json',
      'greedy.jsonl',
      'logits.json',
      'model.safetensors',
      'run-config.json',
      'tasks.jsonl',
      'tasks.parquet',
      'tokenizer.json',
      'tokenizer_config.json',
      'trajectories.jsonl',
    ].sort(),
  );
  const config = JSON.parse(new TextDecoder().decode(folder.get('config.json'))) as Record<string, unknown>;
  expect(config.model_type).toBe('gpt2');
  const model = readSafetensors(folder.get('model.safetensors') as Uint8Array);
  expect(model.tensors.has('lm_head.weight')).toBe(true);
  const rows = new TextDecoder().decode(folder.get('trajectories.jsonl')).trim().split('\n');
  expect(rows.length).toBeGreaterThan(0);
  expect(Object.keys(JSON.parse(rows[0] as string) as object)).toEqual(
    expect.arrayContaining(['input_ids', 'loss_mask', 'logprobs', 'versions', 'reward', 'turns', 'task_id']),
  );
  // The held-out and generalisation tasks played greedily, each policy token with its legal ids.
  const greedy = new TextDecoder()
    .decode(folder.get('greedy.jsonl'))
    .trim()
    .split('\n')
    .map(
      (l) => JSON.parse(l) as { split: string; loss_mask: number[]; legal: number[][]; programs: string[] },
    );
  expect(greedy.length).toBeGreaterThan(50);
  expect(new Set(greedy.map((r) => r.split))).toEqual(new Set(['heldout', 'generalisation']));
  for (const r of greedy) {
    expect(r.legal).toHaveLength(r.loss_mask.filter((m) => m === 1).length);
    expect(r.programs.length).toBeGreaterThan(0);
  }
  await expect(page.getByTestId('run-transfer')).toHaveAttribute('data-ok', 'true');
  await expect(page.getByTestId('run-transfer')).toContainText(`${greedy.length} greedy programs`);
  exported = mkdtempSync(path.join(tmpdir(), 'srl-export-'));
  for (const [name, bytes] of folder) writeFileSync(path.join(exported, name), bytes);

  // Refused: a config of another vocabulary, a truncated model.safetensors; the list is unchanged.
  const before = await stored(page);
  const wrongVocab = new Map(folder).set(
    'config.json',
    new TextEncoder().encode(JSON.stringify({ ...config, vocab_size: (config.vocab_size as number) + 5 })),
  );
  expect(await importFiles(page, wrongVocab, false)).toMatch(/vocab_size/);
  const st = folder.get('model.safetensors') as Uint8Array;
  const truncated = new Map(folder).set('model.safetensors', st.slice(0, st.length - 64));
  expect(await importFiles(page, truncated, false)).toMatch(/model\.safetensors is truncated/);
  expect(await stored(page)).toEqual(before);
  await expect(page.getByTestId('run-list').locator('.run-info')).toHaveCount(before.length);

  // The export imported back (as a zip): a stored run of one version, offered as a start point.
  const said = await importFiles(page, new Map([['exported.zip', await zipFiles(folder)]]), true);
  const imported = /as (imported-\S+) /.exec(said)?.[1] ?? '';
  expect(imported).not.toBe('');
  expect(await stored(page)).toEqual([...before, imported].sort());
  await openView(page, 'advanced');
  const startFrom = page.getByTestId('run-start-from');
  await expect(startFrom.locator('option', { hasText: `${imported}, version 0` })).toHaveCount(1);
  await startFrom.selectOption(imported);
  await expect(startFrom).toHaveValue(imported);
});

test("the page's export passes cluster/check_export.py (logits, greedy programs, every trajectory's reward); the reward matches on the hostile corpus", () => {
  test.skip(
    !existsSync(python),
    `no Python env at ${python}: cluster/setup.sh makes it (npm run test:cluster), or set CLUSTER_VENV`,
  );
  test.setTimeout(300_000);
  expect(exported, 'the export test wrote no folder').not.toBeNull();
  const dir = exported as string;
  const r = spawnSync(python, ['cluster/check_export.py', dir], { encoding: 'utf8', timeout: 240_000 });
  const said = `${r.stdout}\n${r.stderr}`;
  // Its figures in the test's log: greedy tasks and trajectories equal, the logit difference.
  console.log(r.stdout.trim().split('\n').slice(-4).join('\n'));
  expect(r.status, said).toBe(0);
  // Every greedy task and every stored trajectory equal.
  const greedy = /greedy: (\d+) tasks equal of (\d+)/.exec(r.stdout);
  expect(greedy?.[1], said).toBe(greedy?.[2]);
  expect(Number(greedy?.[2])).toBeGreaterThan(50);
  const traj = /trajectories: (\d+) equal of (\d+)/.exec(r.stdout);
  expect(traj?.[1], said).toBe(traj?.[2]);
  expect(Number(traj?.[2])).toBeGreaterThan(0);
  // Relabelled episodes too: each row carries its task's tests, none is left out.
  expect(/(\d+) relabelled left out/.exec(r.stdout)?.[1], said).toBe('0');
  // The Python reward against the page's QuickJS turns, the sandbox's hostile corpus among them.
  const cases = path.join(dir, 'reward-cases.jsonl');
  const made = spawnSync('npx', ['tsx', 'e2e/bench/reward-parity.ts', '--out', cases], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  expect(made.status, made.stderr).toBe(0);
  const parity = spawnSync(python, ['cluster/check_reward.py', cases], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  expect(parity.status, `${parity.stdout}\n${parity.stderr}`).toBe(0);
  expect(JSON.parse(parity.stdout.trim().split('\n').pop() ?? '{}')).toMatchObject({ mismatches: 0 });
});
