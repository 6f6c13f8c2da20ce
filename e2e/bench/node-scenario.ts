import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Scenario } from './harness.ts';

/** `{ learner: { learningRate: 0.01 } }` as `--set learner.learningRate=0.01` (numbers, flags and choices). */
export function setsOf(config: object, prefix = ''): string[] {
  return Object.entries(config).flatMap(([k, v]: [string, unknown]) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? setsOf(v, `${prefix}${k}.`)
      : ['--set', `${prefix}${k}=${String(v)}`],
  );
}

/**
 * Runs a node script (a path, or a file name in `e2e/bench/`) with `args` in a child process, its
 * stderr shown as it comes, and returns the JSON object it prints last; throws naming `label`
 * when it fails or prints none.
 */
export function runNodeScript(script: string, args: readonly string[], label: string): unknown {
  const file = path.isAbsolute(script)
    ? script
    : path.join(path.dirname(fileURLToPath(import.meta.url)), script);
  const out = spawnSync('npx', ['tsx', file, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 1 << 26,
  });
  const last = out.stdout
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'));
  if (out.status !== 0 || !last)
    throw new Error(`${label} failed (exit ${out.status}): ${(last ?? out.stdout).slice(-300)}`);
  return JSON.parse(last) as unknown;
}

/**
 * A bench scenario that runs a node script of `e2e/bench/` (the page's pipeline and trainer in
 * node: a page run per arm would take many minutes each), passes it the scenario's `options` and
 * the bench's `--set` fields, and reports the JSON object it prints last under `key`.
 */
export function nodeScenario(s: {
  name: string;
  description: string;
  /** The script's file name in `e2e/bench/`. */
  script: string;
  /** The bench options passed through as `--option value`. */
  options: readonly string[];
  key: string;
}): Scenario {
  return {
    name: s.name,
    description: s.description,
    async run({ options, config, log }) {
      const passed = s.options.flatMap((k) =>
        options[k]?.[0] !== undefined ? [`--${k}`, options[k][0]] : [],
      );
      log(`npx tsx e2e/bench/${s.script} ${passed.join(' ')}`);
      return { [s.key]: runNodeScript(s.script, [...passed, ...setsOf(config)], s.script) };
    },
  };
}
