import type { JSHandle } from 'playwright-core';
import * as tf from '@tensorflow/tfjs';
import { DEFAULT_MODEL_ARGS } from '../../../src/lib/policy/config.ts';
import { DEFAULT_LORA } from '../../../src/lib/policy/lora.ts';
import { PolicyTrainer } from '../../../src/lib/rl/trainer.ts';
import { withinOverrides, type RunOverrides } from '../../../src/lib/config/run-config.ts';
import type { Scenario } from '../harness.ts';
import { TRAINED_POLICY } from '../portable.ts';
import { labHandle, untilTrainerSettled, type Lab } from '../../support/lab.ts';
import { DEFAULT_TRAINER_CONFIG } from '../../../src/lib/rl/learner-config';

const round = (v: number | null | undefined, d = 3) =>
  v === null || v === undefined ? null : Math.round(v * 10 ** d) / 10 ** d;

/** Bytes of one published version of the default policy, full and LoRA (real packed checkpoints). */
async function bytesPerVersion(): Promise<{ full: number; lora: number; loraRank: number }> {
  await tf.setBackend('cpu');
  const t = new PolicyTrainer(DEFAULT_MODEL_ARGS, DEFAULT_TRAINER_CONFIG, undefined, DEFAULT_LORA);
  try {
    const full = (await t.exportPolicy(true)).params.data.byteLength;
    const lora = (await t.exportPolicy()).params.data.byteLength;
    return { full, lora, loraRank: DEFAULT_LORA.rank };
  } finally {
    t.dispose();
  }
}

/**
 * PPO+GAE, GRPO and RLOO at equal episodes: each a fresh run (same seed: the same initial
 * weights), `iterations` versions on the easy level, then greedy success on the easy training
 * and held-out tasks.
 */
async function compareEstimators(
  lab: JSHandle<Lab>,
  iterations: number,
  settings: RunOverrides,
  log: (line: string) => void,
): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  if (iterations <= 0) return out;
  for (const [key, estimator] of [
    ['ppoGae', 'gae'],
    ['grpo', 'grpo'],
    ['rloo', 'rloo'],
  ] as const) {
    const r = await lab.evaluate(
      async (l, a) => {
        await l.run.start({
          evalEvery: 0,
          maxIterations: a.n,
          config: { ...a.settings, learner: { ...a.settings.learner, estimator: a.estimator } },
        });
        const last = l.run.error ? null : await l.run.evaluateLatest('easy');
        return { error: l.run.error, last, episodes: l.run.dashboard?.counters.trainedEpisodes ?? 0 };
      },
      { n: iterations, estimator, settings },
    );
    if (r.error) throw new Error(`${estimator} run failed: ${r.error}`);
    log(`estimator ${estimator}: ${JSON.stringify(r)}`);
    out[key] = {
      episodes: r.episodes,
      successTrain: round(r.last?.successTrain),
      successHeldOut: round(r.last?.successHeldOut),
    };
  }
  return out;
}

/** Greedy success an evaluation must reach on the level's training and held-out tasks. */
const GOALS: Record<'easy' | 'medium', { train: number; heldOut: number }> = {
  easy: { train: 0.9, heldOut: 0.7 },
  medium: { train: 0.7, heldOut: 0.5 },
};

const scenario: Scenario = {
  name: 'learn',
  description:
    'trains the code-writing policy on the easy level (`--level medium`: the medium level alone; the pipeline with its default config, seed 1) until an evaluation meets the goal (greedy success ≥ 0.9 on easy training tasks and ≥ 0.7 on held-out ones; on medium ≥ 0.7 and ≥ 0.5; with `--until train90`, the first alone; with `--until budget`, none) or the budget',
  async run({ baseUrl, launch, options, log, shared, config }) {
    const budget = Number(options.budget?.[0] ?? 300);
    const evalEvery = Number(options.evalEvery?.[0] ?? 5);
    const backend = options.backend?.[0];
    // Stop at the first evaluation that meets the whole goal, or (`--until train90`) its first
    // half, or (`--until budget`) train the whole budget: a figure no evaluation was picked for.
    const until = options.until?.[0] ?? 'goal';
    const level = (['easy', 'medium'] as const).find((l) => l === (options.level?.[0] ?? 'easy'));
    if (!level) throw new Error(`--level takes easy or medium, not ${options.level?.[0]}`);
    const goal = GOALS[level];
    if (until !== 'goal' && until !== 'train90' && until !== 'budget')
      throw new Error(`--until takes goal, train90 or budget, not ${until}`);
    const browser = await launch();
    try {
      const page = await browser.newPage();
      await page.goto(`${baseUrl}?debug&wcTimeout=1${backend ? `&backend=${backend}` : ''}`);
      await untilTrainerSettled(page, 180_000);
      const lab = await labHandle(page);
      const trainerError = await lab.evaluate((l) => l.trainer.error);
      if (trainerError) throw new Error(`trainer failed to start: ${trainerError}`);
      // Every knob of the run comes from `--set group.field=value` (e.g. `--set learner.clipEps=0.1`).
      const settings: RunOverrides = withinOverrides(config, { task: { level } });
      // `--pretrain S`: first train every parameter for S seconds; the measured run then starts
      // from that run's newest version (with `--lora R`: LoRA on a trained base).
      const pretrain = Number(options.pretrain?.[0] ?? 0);
      if (pretrain > 0) {
        // The pretraining trains every parameter (with `--set policy.lora.rank=R`, the measured run is LoRA on it).
        const full = withinOverrides(settings, { policy: { lora: null } });
        const startFrom = await lab.evaluate(
          async (l, a) => {
            void l.run.start({ evalEvery: 0, config: a.full });
            await new Promise((r) => setTimeout(r, a.pretrain * 1000));
            if (l.run.error) throw new Error(`the pretraining run failed: ${l.run.error}`);
            await l.run.stop();
            await l.run.refreshRuns();
            const from = l.run.runs.find((r) => r.id === l.run.runId);
            if (!from) throw new Error('the pretraining run is not stored');
            return { runId: from.id, version: from.latestVersion };
          },
          { full, pretrain },
        );
        settings.policy = { ...settings.policy, startFrom };
        log(`pretrained ${pretrain} s: starting from ${JSON.stringify(startFrom)}`);
      }
      const t0 = Date.now(); // the budget is the measured run's
      await lab.evaluate((l, a) => void l.run.start({ evalEvery: a.evalEvery, config: a.settings }), {
        evalEvery,
        settings,
      });
      let secondsToTrain90: number | null = null;
      let secondsToGoal: number | null = null;
      let seen = 0;
      /** Every evaluation of the run (its wall seconds and both successes). */
      const evals: { seconds: number; train: number; heldOut: number }[] = [];
      for (;;) {
        await new Promise((r) => setTimeout(r, 2000));
        const s = await lab.evaluate((l) => ({
          evals: l.run.evals,
          running: l.run.running,
          error: l.run.error,
          recent: l.run.steps.slice(-5),
        }));
        if (s.error) throw new Error(`the run failed: ${s.error}`);
        for (const e of s.evals.slice(seen)) {
          const r = s.recent;
          const meanReturn = r.reduce((a, x) => a + x.meanReturn, 0) / Math.max(1, r.length);
          const batchSuccess = r.reduce((a, x) => a + (x.success ?? 0), 0) / Math.max(1, r.length);
          log(
            `${e.seconds.toFixed(0)} s, ${e.episodes} episodes: greedy success train ${e.successTrain.toFixed(2)}, held-out ${e.successHeldOut?.toFixed(2)}; last batches: return ${meanReturn.toFixed(3)}, success ${batchSuccess.toFixed(2)}`,
          );
          evals.push({ seconds: e.seconds, train: e.successTrain, heldOut: e.successHeldOut ?? 0 });
          if (secondsToTrain90 === null && e.successTrain >= goal.train) secondsToTrain90 = e.seconds;
          if (
            secondsToGoal === null &&
            e.successTrain >= goal.train &&
            (e.successHeldOut ?? 0) >= goal.heldOut
          )
            secondsToGoal = e.seconds;
        }
        seen = s.evals.length;
        const done =
          until === 'goal' ? secondsToGoal !== null : until === 'train90' ? secondsToTrain90 !== null : false;
        if (done || (Date.now() - t0) / 1000 > budget || !s.running) break;
      }
      // The learner the run trained with, as its session holds it (`--set learner.…` included).
      const learner = await lab.evaluate((l) => l.run.session?.settings.learner ?? null);
      await lab.evaluate((l) => l.run.stop());
      const final = await lab.evaluate(
        async (l, lv) => ({
          last: await l.run.evaluateLatest(lv),
          episodes: l.run.dashboard?.counters.generatedEpisodes ?? 0,
          trained: l.run.dashboard?.counters.trainedEpisodes ?? 0,
          hindsight: l.run.dashboard?.hindsight ?? null,
          iterations: l.run.steps.length,
          steps: l.run.metrics?.step ?? 0,
          backend: l.trainer.info?.backend ?? null,
        }),
        level,
      );
      log(`end: greedy success train ${final.last.successTrain}, held-out ${final.last.successHeldOut}`);
      // The trained policy, for a `tasks` scenario later in this bench run.
      shared.set(
        TRAINED_POLICY,
        await lab.evaluate(async (l) => {
          const c = await l.trainer.api.exportMerged();
          return {
            format: c.format,
            model: c.model,
            step: c.step,
            entries: c.params.entries,
            values: Array.from(new Float32Array(c.params.data)),
          };
        }),
      );
      const estimators = await compareEstimators(
        lab,
        Number(options.estimatorIterations?.[0] ?? 40),
        settings,
        log,
      );
      const bytes = await bytesPerVersion();
      // The evaluations of the run's last 60 s, averaged: how steady the end is, where the one
      // re-evaluation of the newest version is a single draw of answers that flip.
      const end = evals.at(-1)?.seconds ?? 0;
      const tail = evals.filter((e) => e.seconds >= end - 60);
      const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
      return {
        'learn.secondsToTrain90': round(secondsToTrain90, 1),
        // The first evaluation (every `--evalEvery` versions) at the level's goal (`learn.goal`).
        'learn.level': level,
        'learn.goal': goal,
        'learn.secondsToGoal': round(secondsToGoal, 1),
        'learn.successTrain': round(final.last?.successTrain),
        'learn.successHeldOut': round(final.last?.successHeldOut),
        'learn.successGeneralisation': round(final.last?.successGeneralisation),
        // Programs relabelled into the pool, and those kept out as computing a held-out or generalisation task.
        'learn.relabelled': final.hindsight?.relabelled ?? null,
        'learn.decontaminated': final.hindsight?.decontaminated ?? null,
        'learn.episodes': final.episodes,
        'learn.trainedEpisodes': final.trained,
        'learn.iterations': final.iterations,
        'learn.trainSteps': final.steps,
        'learn.backend': final.backend,
        'learn.learner': learner,
        // What the run trained: null for every parameter, else the LoRA config (`--set policy.lora.rank=R`).
        'learn.lora': settings.policy?.lora ?? null,
        // `--pretrain S`: the seconds a full run trained first (the measured run started from it).
        'learn.pretrainSeconds': pretrain,
        'learn.budgetSeconds': budget,
        'learn.until': until,
        'learn.lastMinute': {
          evaluations: tail.length,
          successTrain: round(mean(tail.map((e) => e.train))),
          successHeldOut: round(mean(tail.map((e) => e.heldOut))),
          goalMet: tail.filter((e) => e.train >= goal.train && e.heldOut >= goal.heldOut).length,
        },
        'learn.estimators': estimators,
        'learn.bytesPerVersion': bytes,
      };
    } finally {
      await browser.close();
    }
  },
};

export default scenario;
