import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Scenario } from '../harness.ts';

const script = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'strategies-node.ts');

/**
 * The update strategies side by side (DESIGN §5): `e2e/bench/strategies-node.ts` in node, the
 * page's trainer and pipeline per strategy and seed at equal versions (η = 0: the same episodes),
 * and the optimiser step alone per strategy, interleaved. A page run per strategy and seed would
 * take many minutes each.
 */
const scenario: Scenario = {
  name: 'strategies',
  description:
    'update strategies in node (e2e/bench/strategies-node.ts): per strategy, success at equal versions, trainer ms per step and per version, bytes per stored version, tensors trained, auto’s switches, mean ± sd over --seeds (--versions, --strategies, --stepRounds)',
  async run({ options, log }) {
    const passed = ['seeds', 'versions', 'strategies', 'stepRounds'].flatMap((k) =>
      options[k]?.[0] !== undefined ? [`--${k}`, options[k][0]] : [],
    );
    log(`npx tsx ${script} ${passed.join(' ')}`);
    const out = spawnSync('npx', ['tsx', script, ...passed], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 1 << 26,
    });
    const last = out.stdout.trim().split('\n').at(-1) ?? '';
    if (out.status !== 0 || !last.startsWith('{'))
      throw new Error(`strategies-node.ts failed (${out.status}): ${last.slice(0, 200)}`);
    return { strategies: JSON.parse(last) as unknown };
  },
};

export default scenario;
