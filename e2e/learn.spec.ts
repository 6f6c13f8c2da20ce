import { expect, test } from '@playwright/test';
import { openReady } from './support/page';

/** The part of the page's `?debug` hook (src/global.d.ts) this test reads. */
interface EvalPoint {
  iteration: number;
  meanRewardTrain: number;
}
type LabWindow = {
  __lab?: {
    trainer: { info: { backend: string } | null };
    run: {
      running: boolean;
      error: string | null;
      evals: EvalPoint[];
      start(opts: { level: string; evalEvery: number; maxIterations: number }): Promise<void>;
    };
  };
};

const ITERATIONS = 6;

test('RL on the easy tasks, trainer on webgpu: greedy mean reward rises clearly above the untrained policy on the same tasks', async ({
  page,
}) => {
  test.setTimeout(900_000);
  await openReady(page, '?debug&backend=webgpu&wcTimeout=3000');
  const backend = await page.evaluate(() => (window as unknown as LabWindow).__lab?.trainer.info?.backend);
  expect(backend).toBe('webgpu');
  // Evaluates the untrained policy (iteration 0), trains, evaluates again on the same tasks.
  await page.evaluate(
    (n) =>
      void (window as unknown as LabWindow).__lab?.run.start({
        level: 'easy',
        evalEvery: n,
        maxIterations: n,
      }),
    ITERATIONS,
  );
  await page.waitForFunction(
    (n) => {
      const run = (window as unknown as LabWindow).__lab?.run;
      return (
        !!run &&
        (!!run.error || (!run.running && run.evals.length >= 2) || run.evals.some((e) => e.iteration === n))
      );
    },
    ITERATIONS,
    { timeout: 840_000, polling: 2000 },
  );
  const run = await page.evaluate(() => {
    const r = (window as unknown as LabWindow).__lab?.run;
    return { error: r?.error ?? null, evals: r?.evals ?? [] };
  });
  expect(run.error).toBeNull();
  const [before, after] = [run.evals[0], run.evals[run.evals.length - 1]];
  expect(before?.iteration).toBe(0);
  expect(after?.iteration).toBe(ITERATIONS);
  console.log(
    `greedy mean reward on easy training tasks: untrained ${before?.meanRewardTrain}, after ${ITERATIONS} iterations ${after?.meanRewardTrain}`,
  );
  expect(after?.meanRewardTrain ?? NaN).toBeGreaterThan((before?.meanRewardTrain ?? NaN) + 0.05);
});
