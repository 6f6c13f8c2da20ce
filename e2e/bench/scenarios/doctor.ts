import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Scenario } from '../harness.ts';

const script = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'doctor-node.ts');

/** `{ learner: { learningRate: 0.01 } }` as `--set learner.learningRate=0.01` (numbers, flags and choices). */
function setsOf(config: object, prefix = ''): string[] {
  return Object.entries(config).flatMap(([k, v]: [string, unknown]) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? setsOf(v, `${prefix}${k}.`)
      : ['--set', `${prefix}${k}=${String(v)}`],
  );
}

/**
 * The training doctor on real runs: a healthy run per seed (any finding is false) and runs
 * provoked to fail (learning rate 30× too high; no entropy bonus at temperature 0.3; a level too
 * easy), each checked for the finding it should raise. It runs `e2e/bench/doctor-node.ts` (the
 * page's pipeline, trainer and doctor in node): a page run per arm would take many minutes each.
 */
const scenario: Scenario = {
  name: 'doctor',
  description:
    "the training doctor on real runs, in node (e2e/bench/doctor-node.ts, not the page: a page run per arm is too slow): healthy runs' false findings, and whether each provoked fault (--arms lr-high,no-entropy,saturated) raises its finding (--seeds, --seconds, --maxVersions per run)",
  async run({ options, config, log }) {
    const passed = ['arms', 'seeds', 'seconds', 'maxVersions', 'out'].flatMap((k) =>
      options[k]?.[0] !== undefined ? [`--${k}`, options[k][0]] : [],
    );
    log(`npx tsx ${script} ${passed.join(' ')}`);
    const out = spawnSync('npx', ['tsx', script, ...passed, ...setsOf(config)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 1 << 26,
    });
    const last = out.stdout.trim().split('\n').at(-1) ?? '';
    if (out.status !== 0 || !last.startsWith('{')) throw new Error(`doctor-node.ts failed (${out.status})`);
    return { 'doctor.runs': JSON.parse(last) as unknown };
  },
};

export default scenario;
