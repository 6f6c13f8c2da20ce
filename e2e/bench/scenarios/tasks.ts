import { readFileSync } from 'node:fs';
import { agentFigures, type EvalRow, type EvalTask } from '../../../src/lib/env/evaluate.ts';
import { parseSuite, type TaskSplit } from '../../../src/lib/env/suite.ts';
import { builtInTasks, generalisationOf } from '../../../src/lib/env/task-kinds.ts';
import { defaultRunConfig, withOverrides } from '../../../src/lib/config/run-config.ts';
import type { Scenario } from '../harness.ts';
import { TRAINED_POLICY, type PortableCheckpoint } from '../portable.ts';
import { labHandle, untilLabExposed, type Lab } from '../../support/lab.ts';

/**
 * The built-in suite (seed 1, with its split — `split`, from `--set task.split=…` — and its
 * generalisation suite), or a suite file whose tasks all count as held-out.
 */
export function benchTasks(
  file: string | undefined,
  split: TaskSplit = 'families',
): { tasks: EvalTask[]; source: string } {
  if (!file) {
    const suite = builtInTasks('examples', 1, split);
    return {
      tasks: [...suite, ...generalisationOf(suite)].map(({ family: _f, program: _p, ...t }) => t),
      source: `built-in (seed 1, ${split} split)`,
    };
  }
  const parsed = parseSuite(readFileSync(file, 'utf8'));
  if (!parsed.ok) throw new Error(`${file}: ${parsed.path}: ${parsed.message}`);
  return { tasks: parsed.suite.tasks.map((t) => ({ ...t, heldOut: true })), source: file };
}

const round = (v: number | null | undefined, d = 3) =>
  v === null || v === undefined ? null : Math.round(v * 10 ** d) / 10 ** d;

const scenario: Scenario = {
  name: 'tasks',
  description:
    'evaluates a task suite (built-in, or --tasks FILE) with random tokens, the untrained policy, brute force and the policy',
  async run({ baseUrl, launch, options, log, shared, config }) {
    const split = withOverrides(defaultRunConfig(), config).task.split;
    const { tasks, source } = benchTasks(options.tasks?.[0], split);
    const samples = Number(options.samples?.[0] ?? 2);
    const bruteMaxRuns = options.bruteMaxRuns?.[0] ? Number(options.bruteMaxRuns[0]) : undefined;
    log(`tasks: ${tasks.length} from ${source}`);
    const browser = await launch({ webgpu: false });
    try {
      const page = await browser.newPage();
      // The trainer on wasm: this scenario measures evaluation, not the trainer's startup.
      await page.goto(`${baseUrl}?debug&backend=wasm&wcTimeout=1`);
      await untilLabExposed(page);
      const lab = await labHandle(page);
      const timer = setInterval(() => {
        void lab
          .evaluate((l) => l.tasks.progress)
          .then((p) => p && log(`${p.agent} (${p.mode}): ${p.done}/${p.total}`))
          .catch(() => undefined);
      }, 5000);
      // The policy a `learn` scenario trained earlier in this bench run, if any.
      const trained = shared.get(TRAINED_POLICY) as PortableCheckpoint | undefined;
      if (trained) {
        // Rebuilt inside the page (a function passed to evaluate is serialised: no closures).
        await lab.evaluate(
          (l, c) =>
            l.tasks.loadPolicy({
              format: c.format,
              model: c.model,
              step: c.step,
              params: { entries: c.entries, data: new Float32Array(c.values).buffer },
            }),
          trained,
        );
      }
      const agents: Parameters<Lab['tasks']['evaluateTasks']>[1] = [
        'random',
        'untrained',
        'bruteforce',
        ...(trained ? (['policy'] as const) : []),
      ];
      const t0 = performance.now();
      let rows: EvalRow[];
      try {
        rows = await lab.evaluate(
          (l, a) => l.tasks.evaluateTasks(a.tasks, a.agents, a.samples, a.bruteMaxRuns),
          { tasks, agents, samples, bruteMaxRuns },
        );
      } finally {
        clearInterval(timer);
      }
      const backend = await lab.evaluate((l) => l.tasks.backend);
      const out: Record<string, unknown> = {
        'tasks.source': source,
        'tasks.count': tasks.length,
        'tasks.heldOutCount': tasks.filter((t) => t.heldOut && !t.generalisation).length,
        'tasks.generalisationCount': tasks.filter((t) => t.generalisation).length,
        'tasks.samplesPerTask': samples,
        'tasks.inferenceBackend': backend,
        'tasks.seconds': round((performance.now() - t0) / 1000, 1),
        // `policy` is the policy the learn scenario trained in this bench run, else the untrained one.
        'tasks.policySource': trained ? 'learn' : 'untrained',
      };
      for (const [key, agent] of [
        ['random', 'random'],
        ['untrained', 'untrained'],
        ['bruteforce', 'bruteforce'],
        ['policy', trained ? 'policy' : 'untrained'],
      ] as const) {
        const f = agentFigures(rows, agent);
        out[`tasks.${key}`] = {
          successTrain: round(f.successTrain),
          successHeldOut: round(f.successHeldOut),
          successGeneralisation: round(f.successGeneralisation),
          meanTurns: round(f.meanTurns),
          meanReward: round(f.meanReward),
          ...(f.sandboxRunsPerTask === undefined
            ? {}
            : { sandboxRunsPerTask: round(f.sandboxRunsPerTask, 1) }),
        };
      }
      return out;
    } finally {
      await browser.close();
    }
  },
};

export default scenario;
