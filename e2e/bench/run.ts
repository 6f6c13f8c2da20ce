// `npm run bench -- [--scenario NAME]... [--json] [--OPTION VALUE]...`
// Builds the app, serves it, runs each scenario in headless Chromium and prints one JSON object
// as the last line of stdout (a readable table above it unless --json).
import { execSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { preview } from 'vite';
import { BASE_ARGS, WEBGPU_ARGS, ensureChromium } from '../support/chromium.ts';
import { overridesFromSetList } from '../../src/lib/config/set-list.ts';
import type { BenchResult, Scenario } from './harness.ts';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');

function parseArgs(argv: string[]): {
  scenarios: string[];
  json: boolean;
  options: Record<string, string[]>;
} {
  const scenarios: string[] = [];
  const options: Record<string, string[]> = {};
  let json = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--json') json = true;
    else if (arg.startsWith('--')) {
      const value = argv[i + 1];
      if (value === undefined || value.startsWith('--')) throw new Error(`option ${arg} needs a value`);
      i++;
      if (arg === '--scenario') scenarios.push(value);
      else (options[arg.slice(2)] ??= []).push(value);
    } else throw new Error(`unexpected argument ${arg}`);
  }
  return { scenarios, json, options };
}

async function loadScenarios(): Promise<Map<string, Scenario>> {
  const dir = join(here, 'scenarios');
  const found = new Map<string, Scenario>();
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .sort()) {
    const mod = (await import(pathToFileURL(join(dir, file)).href)) as { default: Scenario };
    found.set(mod.default.name, mod.default);
  }
  return found;
}

async function main(): Promise<void> {
  const { scenarios: wanted, json, options } = parseArgs(process.argv.slice(2));
  // Every `--set` is checked before anything is built or run: a bad one names its field.
  const config = overridesFromSetList(options.set ?? []);
  delete options.set;
  const available = await loadScenarios();
  const names = wanted.length ? wanted : [...available.keys()];
  for (const n of names) {
    if (!available.has(n))
      throw new Error(`unknown scenario "${n}" (have: ${[...available.keys()].join(', ')})`);
  }
  const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
  const executablePath = ensureChromium(log);
  log('building the app…');
  execSync('npx vite build', { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  // BENCH_PORT lets two benches run side by side on one machine.
  const port = Number(process.env.BENCH_PORT ?? 4190);
  const server = await preview({
    root,
    logLevel: 'silent',
    preview: { host: '127.0.0.1', port },
  });
  const baseUrl = server.resolvedUrls?.local[0] ?? 'http://127.0.0.1:4190/';
  const shared = new Map<string, unknown>();
  const results: BenchResult = { machine: `${process.platform} ${process.arch}, node ${process.version}` };
  try {
    for (const name of names) {
      const scenario = available.get(name);
      if (!scenario) continue;
      log(`scenario ${name}: ${scenario.description}`);
      Object.assign(
        results,
        await scenario.run({
          baseUrl,
          distDir: join(root, 'dist'),
          config,
          options,
          log,
          shared,
          launch: ({ webgpu = true } = {}) =>
            chromium.launch({ executablePath, args: webgpu ? [...BASE_ARGS, ...WEBGPU_ARGS] : BASE_ARGS }),
        }),
      );
    }
  } finally {
    await server.close();
  }
  if (!json) {
    for (const [k, v] of Object.entries(results)) console.log(`${k.padEnd(28)} ${JSON.stringify(v)}`);
  }
  if (Object.keys(config).length > 0) results.set = config;
  console.log(JSON.stringify(results));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
