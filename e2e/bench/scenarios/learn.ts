import type { JSHandle } from 'playwright-core';
import type { Scenario } from '../harness.ts';

/** The part of the page's `?debug` state this scenario uses (src/lib/ui/run-state.svelte.ts). */
interface LearnLab {
  trainer: { status: string; error: string | null; info: { backend: string } | null };
  run: {
    running: boolean;
    error: string | null;
    history: { stats: { episodes: number; meanReturn: number; success: number | null } }[];
    evals: { seconds: number; episodes: number; successTrain: number; successHeldOut: number | null }[];
    start(opts: {
      level?: string;
      evalEvery?: number;
      maxIterations?: number;
      run?: Record<string, unknown>;
      learningRate?: number;
    }): Promise<void>;
    stop(): void;
  };
}

const round = (v: number | null | undefined, d = 3) =>
  v === null || v === undefined ? null : Math.round(v * 10 ** d) / 10 ** d;

const scenario: Scenario = {
  name: 'learn',
  description:
    'trains the code-writing policy on the easy level (sync loop, default config, seed 1) until greedy success ≥ 0.9 on easy training tasks or the budget',
  async run({ baseUrl, launch, options, log }) {
    const budget = Number(options.budget?.[0] ?? 300);
    const evalEvery = Number(options.evalEvery?.[0] ?? 5);
    const backend = options.backend?.[0];
    const browser = await launch();
    try {
      const page = await browser.newPage();
      await page.goto(`${baseUrl}?debug&wcTimeout=1${backend ? `&backend=${backend}` : ''}`);
      await page.waitForFunction(
        () =>
          ['ready', 'error'].includes(
            (window as unknown as { __lab?: LearnLab }).__lab?.trainer.status ?? '',
          ),
        null,
        { timeout: 180_000 },
      );
      const lab = (await page.evaluateHandle(
        () => (window as unknown as { __lab: LearnLab }).__lab,
      )) as JSHandle<LearnLab>;
      const trainerError = await lab.evaluate((l) => l.trainer.error);
      if (trainerError) throw new Error(`trainer failed to start: ${trainerError}`);
      const t0 = Date.now();
      // `--updates N`, `--estimator rloo|grpo|gae` and `--lr X` override the run's defaults.
      const run: Record<string, unknown> = {};
      if (options.updates?.[0]) run.updatesPerBatch = Number(options.updates[0]);
      if (options.estimator?.[0]) run.estimator = options.estimator[0];
      const learningRate = options.lr?.[0] ? Number(options.lr[0]) : undefined;
      await lab.evaluate(
        (l, a) =>
          void l.run.start({
            level: 'easy',
            evalEvery: a.evalEvery,
            run: a.run,
            learningRate: a.learningRate,
          }),
        { evalEvery, run, learningRate },
      );
      let secondsToTrain90: number | null = null;
      let seen = 0;
      for (;;) {
        await new Promise((r) => setTimeout(r, 2000));
        const s = await lab.evaluate((l) => ({
          evals: l.run.evals,
          running: l.run.running,
          error: l.run.error,
          recent: l.run.history.slice(-5).map((h) => h.stats),
        }));
        if (s.error) throw new Error(`the run failed: ${s.error}`);
        for (const e of s.evals.slice(seen)) {
          const r = s.recent;
          const meanReturn = r.reduce((a, x) => a + x.meanReturn, 0) / Math.max(1, r.length);
          const batchSuccess = r.reduce((a, x) => a + (x.success ?? 0), 0) / Math.max(1, r.length);
          log(
            `${e.seconds.toFixed(0)} s, ${e.episodes} episodes: greedy success train ${e.successTrain.toFixed(2)}, held-out ${e.successHeldOut?.toFixed(2)}; last batches: return ${meanReturn.toFixed(3)}, success ${batchSuccess.toFixed(2)}`,
          );
          if (secondsToTrain90 === null && e.successTrain >= 0.9) secondsToTrain90 = e.seconds;
        }
        seen = s.evals.length;
        if (secondsToTrain90 !== null || (Date.now() - t0) / 1000 > budget || !s.running) break;
      }
      await lab.evaluate((l) => l.run.stop());
      await page.waitForFunction(() => !(window as unknown as { __lab: LearnLab }).__lab.run.running, null, {
        timeout: 600_000,
      });
      const final = await lab.evaluate((l) => ({
        last: l.run.evals[l.run.evals.length - 1] ?? null,
        episodes: l.run.history.reduce((n, h) => n + h.stats.episodes, 0),
        steps: l.run.history.length,
        backend: l.trainer.info?.backend ?? null,
      }));
      return {
        'learn.secondsToTrain90': round(secondsToTrain90, 1),
        'learn.successTrain': round(final.last?.successTrain),
        'learn.successHeldOut': round(final.last?.successHeldOut),
        'learn.episodes': final.episodes,
        'learn.trainSteps': final.steps,
        'learn.backend': final.backend,
        'learn.budgetSeconds': budget,
      };
    } finally {
      await browser.close();
    }
  },
};

export default scenario;
