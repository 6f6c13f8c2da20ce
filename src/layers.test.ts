import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

// The import directions of DESIGN §11.1, checked against ESLint: every folder's row as the
// document writes it, and a fixture that imports every folder from every folder.

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The folders of the table and what each may import, as DESIGN.md writes them. */
function designTable(): Map<string, Set<string>> {
  const design = readFileSync(path.join(ROOT, 'docs/DESIGN.md'), 'utf8');
  const section = design.slice(design.indexOf('### 11.1 Import directions'));
  const lines = section.split('\n');
  const start = lines.findIndex((line) => line.startsWith('|'));
  const end = lines.findIndex((line, i) => i > start && !line.startsWith('|'));
  const rows = lines
    .slice(start + 2, end) // past the header and its rule
    .map((line) => line.split('|').map((cell) => cell.trim()));
  const names = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
  const layers = rows.filter(([, layer]) => layer !== '').map(([, , folders]) => names(folders ?? ''));
  const table = new Map<string, Set<string>>();
  for (const [, , folders = '', mayImport = ''] of rows) {
    const allowed = names(mayImport);
    for (const m of mayImport.matchAll(/layers? (\d+)(?:–(\d+))?/g)) {
      const [from, to] = [Number(m[1]), Number(m[2] ?? m[1])];
      allowed.push(...layers.slice(from, to + 1).flat());
    }
    for (const folder of names(folders)) table.set(folder, new Set(allowed));
  }
  return table;
}

/** A file of `folder` the fixtures are linted as, and the module of it they import. */
function place(folder: string): { file: string; module: string } {
  const places: Record<string, { file: string; module: string }> = {
    'src/lib/*.ts': { file: 'src/lib/fixture.ts', module: 'src/lib/errors' },
    'workers/': { file: 'workers/trainer/fixture.ts', module: 'workers/rollout.worker' },
    'components/': { file: 'src/components/fixture.ts', module: 'src/components/Badge.svelte' },
    'App.svelte': { file: 'src/App.svelte', module: 'src/App.svelte' },
    'src/*.ts': { file: 'src/fixture.ts', module: 'src/global' },
    'e2e/bench/': { file: 'e2e/bench/scenarios/fixture.ts', module: 'e2e/bench/cpu' },
    'e2e/': { file: 'e2e/support/fixture.ts', module: 'e2e/support/page' },
  };
  const lib = `src/lib/${folder.slice(0, -1)}`;
  return places[folder] ?? { file: `${lib}/fixture.ts`, module: `${lib}/module` };
}

/** How a file reaches a module: the relative specifier, as the code base writes it. */
function specifier(file: string, module: string): string {
  const rel = path.posix.relative(path.posix.dirname(file), module);
  return rel.startsWith('.') ? rel : `./${rel}`;
}

let eslint: ESLint;
beforeAll(() => {
  eslint = new ESLint({ cwd: ROOT });
});

/** The import-direction messages ESLint gives `code` as the file `file`. */
async function restricted(file: string, code: string): Promise<{ line: number; message: string }[]> {
  const source = file.endsWith('.svelte') ? `<script lang="ts">\n${code}</script>\n` : code;
  const [result] = await eslint.lintText(source, { filePath: path.join(ROOT, file) });
  const offset = file.endsWith('.svelte') ? 1 : 0;
  return (result?.messages ?? [])
    .filter((m) => m.ruleId === 'no-restricted-imports')
    .map((m) => ({ line: m.line - offset, message: m.message }));
}

describe('the import directions (DESIGN §11.1)', () => {
  const table = designTable();
  const folders = [...table.keys()];

  it('has a row for every folder of src/lib/, and for the components, the page, the workers and e2e', () => {
    const libFolders = readdirSync(path.join(ROOT, 'src/lib'), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => `${d.name}/`);
    for (const f of [
      ...libFolders,
      'src/lib/*.ts',
      'components/',
      'App.svelte',
      'workers/',
      'e2e/bench/',
      'e2e/',
    ])
      expect(folders).toContain(f);
    for (const allowed of table.values()) for (const f of allowed) expect(folders).toContain(f);
  });

  it.each(folders)(
    '%s imports exactly what its row names',
    async (folder) => {
      const { file } = place(folder);
      const targets = folders.map((f) => place(f).module);
      const code = targets.map((m) => `import '${specifier(file, m)}';\n`).join('');
      const refused = new Set((await restricted(file, code)).map((m) => folders[m.line - 1]));
      const expected = folders.filter((f) => f !== folder && !table.get(folder)?.has(f));
      expect([...refused].sort()).toEqual(expected.sort());
    },
    60_000,
  );

  it('fails an import against the table with a message that names the rule', async () => {
    const [error] = await restricted(
      'src/lib/run/fixture.ts',
      "import { percentile } from '../view/metrics';\n",
    );
    expect(error?.message).toMatch(/run\/ may not import view\/: see the import directions in DESIGN §11/);
    expect(
      await restricted('src/lib/run/fixture.ts', "import { percentile } from '../stats/metrics';\n"),
    ).toEqual([]);
  });

  it('keeps a component off pipeline/, storage/ and policy/: it goes through ui/', async () => {
    const file = 'src/components/Badge.svelte';
    const code = [
      "import type { TimelineEvent } from '../lib/pipeline/events';",
      "import { POINTS_KEPT } from '../lib/storage/history-store';",
      "import { DEFAULT_MODEL_ARGS } from '../lib/policy/config';",
      "import { POINTS_KEPT as kept, DEFAULT_MODEL_ARGS as args } from '../lib/ui/run-state.svelte';",
      "import type { TimelineEvent as Event } from '../lib/ui/timeline';",
    ].join('\n');
    expect((await restricted(file, `${code}\n`)).map((m) => m.line)).toEqual([1, 2, 3]);
  }, 60_000);

  it('lets components import presets and share links from config/, and nothing of pipeline/', async () => {
    const code = [
      "import '../lib/config/presets';",
      "import '../lib/config/share-link';",
      "import '../lib/pipeline/events';",
    ];
    expect(
      (await restricted('src/components/fixture.ts', code.join('\n') + '\n')).map((m) => m.line),
    ).toEqual([3]);
  });

  it('keeps Svelte out of every layer below ui/', async () => {
    const [error] = await restricted('src/lib/pipeline/fixture.ts', "import { tick } from 'svelte';\n");
    expect(error?.message).toMatch(/only ui\/ and the components import Svelte/);
    expect(await restricted('src/lib/ui/fixture.ts', "import { tick } from 'svelte';\n")).toEqual([]);
  });
});
