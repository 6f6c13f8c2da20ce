/** Pieces the node trainers (`learn-node.ts`, `staleness-node.ts`, …) share: flags, the backend, rollout engines, greedy play. */
import * as tf from '@tensorflow/tfjs';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { EnvConfig } from '../../src/lib/env/config.ts';
import type { Episode } from '../../src/lib/env/episode.ts';
import { runEpisodes } from '../../src/lib/env/evaluate.ts';
import type { Task } from '../../src/lib/env/suite.ts';
import { CachedPolicyAgent, DEFAULT_SAMPLER } from '../../src/lib/policy/sampler.ts';
import type { Weights } from '../../src/lib/policy/model.ts';
import type { ModelArgs } from '../../src/lib/policy/config.ts';
import { RolloutEngine } from '../../src/lib/rollout/rollout-engine.ts';
import type { CachedSandbox } from '../../src/lib/sandbox/cache.ts';
import type { Sandbox } from '../../src/lib/sandbox/types.ts';
import { runNodeScript } from './node-scenario.ts';
import { withOverrides, type RunConfig } from '../../src/lib/config/run-config.ts';
import { overridesFromSetList } from '../../src/lib/config/set-list.ts';

const argv = process.argv.slice(2);

/** `--name value` or `--name=value` on the command line, else `fallback`. */
export function flag(name: string, fallback: string): string {
  const i = argv.indexOf(`--${name}`);
  if (i >= 0 && argv[i + 1] !== undefined) return argv[i + 1] as string;
  const eq = argv.find((a) => a.startsWith(`--${name}=`));
  return eq ? eq.slice(name.length + 3) : fallback;
}

/**
 * `base` with every `--set group.field=value` of the command line laid on it, in order; a bad
 * one stops the script with its field's name and range before anything runs.
 */
export function withSets(base: RunConfig): RunConfig {
  const sets = argv.flatMap((a, i) =>
    a === '--set' && argv[i + 1] !== undefined
      ? [argv[i + 1] as string]
      : a.startsWith('--set=')
        ? [a.slice(6)]
        : [],
  );
  try {
    return withOverrides(base, overridesFromSetList(sets, base));
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(2);
  }
}

/**
 * `count` rollout engines over one sandbox, as the page's workers run them but with no transport:
 * nothing persisted or fetched (the script hands each engine its weights), lanes rollout-0…
 */
export function nodeEngines(
  count: number,
  sandbox: CachedSandbox,
  o: { args: ModelArgs; rows: number; interruptEveryTokens: number; temperature: number; seed: number },
  release: (w: Weights) => void,
): RolloutEngine[] {
  return Array.from(
    { length: count },
    (_, i) =>
      new RolloutEngine(sandbox, {
        ...o,
        seed: o.seed * 31 + i,
        lane: `rollout-${i}` as const,
        fetchAfterMs: 250,
        persist: async () => undefined,
        fetch: async () => undefined,
        release,
      }),
  );
}

/** `tasks` played greedily by the policy `params`, as the page's evaluator plays them (rows of 32, sampler seed 1). */
export async function greedyEpisodes(
  tasks: readonly Task[],
  params: Weights,
  modelArgs: ModelArgs,
  sandbox: Sandbox,
  env?: EnvConfig,
): Promise<Episode[]> {
  const agent = new CachedPolicyAgent('policy', params, modelArgs, {
    ...DEFAULT_SAMPLER,
    greedy: true,
    seed: 1,
  });
  try {
    const out: Episode[] = [];
    for (let i = 0; i < tasks.length; i += 32)
      out.push(...(await runEpisodes(tasks.slice(i, i + 32), agent, sandbox, env)));
    return out;
  } finally {
    agent.dispose();
  }
}

/** Sets tfjs's backend: wasm single-threaded, as the page's workers run it (the other cores stay free), or cpu; checked on a probe. */
export async function useBackend(name: 'wasm' | 'cpu'): Promise<void> {
  if (name === 'wasm') {
    const dir = path.dirname(
      createRequire(import.meta.url).resolve('@tensorflow/tfjs-backend-wasm/package.json'),
    );
    tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
    setWasmPaths(`${path.join(dir, 'dist')}/`);
  }
  if (!(await tf.setBackend(name))) throw new Error(`tf.setBackend('${name}') failed`);
  await tf.ready();
  const probe = tf.tidy(() => tf.matMul(tf.ones([2, 2]), tf.ones([2, 2])).sum());
  const v = (await probe.data())[0];
  probe.dispose();
  if (v !== 8) throw new Error(`${name} computed ${v} on a probe`);
}

/** Runs `e2e/bench/learn-node.ts` with `args` and returns the JSON object it prints last (as far as the caller reads it). */
export function runLearnNode<R>(args: readonly string[], label: string): R {
  return runNodeScript('learn-node.ts', args, `learn-node ${label}`) as R;
}
