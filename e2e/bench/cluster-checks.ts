/**
 * The cluster checks of `npm test` (`npm run test:cluster`, DESIGN §14), each a test that passes or
 * fails: the export check (`cluster/check.sh`), the Python reward against QuickJS
 * (`reward-parity.ts`, `cluster/check_reward.py`), a short TRL run (`cluster/train_trl.py`) and
 * its folder read back and played greedily (`eval-hf-node.ts`). Writes test-results/cluster.json
 * (`{ passed, failed, seconds, tests: [{ name, ok, seconds, summary }] }`, which `.ci/count.mjs`
 * adds to its count) and exits 1 when a check failed.
 *
 *   npx tsx e2e/bench/cluster-checks.ts [--out bench-results/cluster]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { flag } from './node-kit.ts';

const OUT = flag('out', 'bench-results/cluster');
const REPORT = 'test-results/cluster.json';
const python = path.join(process.env.CLUSTER_VENV ?? '.venv-cluster', 'bin', 'python');

interface Check {
  name: string;
  ok: boolean;
  seconds: number;
  /** The last line the check printed (its figures), or why it failed. */
  summary: string;
}

/** Runs the commands in order (stderr shown as it comes); the check fails at the first that fails. */
function check(name: string, commands: string[][]): Check {
  const t0 = performance.now();
  let summary = '';
  let ok = true;
  console.log(`\n[cluster] ${name}`);
  for (const [cmd, ...args] of commands) {
    const r = spawnSync(cmd as string, args, { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
    process.stdout.write(r.stdout ?? '');
    summary = (r.stdout ?? '').trim().split('\n').pop() ?? '';
    if (r.status !== 0) {
      ok = false;
      summary = `${[cmd, ...args].join(' ')} exited ${r.status ?? r.signal}: ${summary}`;
      break;
    }
  }
  const seconds = Math.round((performance.now() - t0) / 100) / 10;
  console.log(`[cluster] ${ok ? 'ok' : 'FAILED'} ${name} (${seconds} s)`);
  return { name, ok, seconds, summary };
}

const checks: Check[] = [];
const first = check('export: the Python env, an export of the base policy, check_export.py', [
  ['bash', 'cluster/check.sh', OUT],
]);
checks.push(first);
const needsEnv = (name: string, commands: string[][]): Check =>
  first.ok
    ? check(name, commands)
    : { name, ok: false, seconds: 0, summary: 'not run: the export check failed (see cluster/setup.sh)' };
checks.push(
  needsEnv('reward: sandbox_reward.py gives QuickJS’s outputs and the page’s rewards', [
    ['npx', 'tsx', 'e2e/bench/reward-parity.ts', '--out', `${OUT}/reward-cases.jsonl`],
    [python, 'cluster/check_reward.py', `${OUT}/reward-cases.jsonl`],
  ]),
);
const trl = needsEnv('train_trl.py: 20 GRPO steps on CPU', [
  [python, 'cluster/train_trl.py', OUT, `${OUT}/trl`],
]);
checks.push(trl);
checks.push(
  trl.ok
    ? check('the TRL folder reads back (importHfGpt2) and plays greedily beside the source', [
        ['npx', 'tsx', 'e2e/bench/eval-hf-node.ts', OUT, `${OUT}/trl`],
      ])
    : { name: 'TRL folder read back', ok: false, seconds: 0, summary: 'not run: train_trl.py failed' },
);

const passed = checks.filter((c) => c.ok).length;
const seconds = Math.round(checks.reduce((s, c) => s + c.seconds, 0) * 10) / 10;
mkdirSync(path.dirname(REPORT), { recursive: true });
writeFileSync(
  REPORT,
  JSON.stringify({ passed, failed: checks.length - passed, seconds, tests: checks }, null, 1),
);
console.log(`\n[cluster] ${passed} passed, ${checks.length - passed} failed in ${seconds} s (${REPORT})`);
if (passed < checks.length) process.exitCode = 1;
