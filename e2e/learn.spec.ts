import { expect, test } from '@playwright/test';
import { onLab, untilLabWith } from './support/lab';
import { openReady } from './support/page';

const ITERATIONS = 6;

test('RL on the easy tasks, trainer on webgpu: greedy mean reward rises clearly above the untrained policy on the same tasks', async ({
  page,
}) => {
  test.setTimeout(900_000);
  await openReady(page, '?debug&backend=webgpu&wcTimeout=3000');
  const backend = await onLab(page, (lab) => lab.trainer.info?.backend);
  expect(backend).toBe('webgpu');
  // Evaluates the untrained policy (iteration 0), trains, evaluates again on the same tasks.
  await onLab(
    page,
    (lab, n) => void lab.run.start({ config: { task: { level: 'easy' } }, evalEvery: n, maxIterations: n }),
    ITERATIONS,
  );
  await untilLabWith(
    page,
    ([lab, n]) => {
      const run = lab.run;
      return (
        !!run.error || (!run.running && run.evals.length >= 2) || run.evals.some((e) => e.iteration === n)
      );
    },
    ITERATIONS,
    { timeout: 840_000, polling: 2000 },
  );
  const run = await onLab(page, (lab) => ({ error: lab.run.error ?? null, evals: lab.run.evals }));
  expect(run.error).toBeNull();
  const [before, after] = [run.evals[0], run.evals[run.evals.length - 1]];
  expect(before?.iteration).toBe(0);
  expect(after?.iteration).toBe(ITERATIONS);
  console.log(
    `greedy mean reward on easy training tasks: untrained ${before?.meanRewardTrain}, after ${ITERATIONS} iterations ${after?.meanRewardTrain}`,
  );
  expect(after?.meanRewardTrain ?? NaN).toBeGreaterThan((before?.meanRewardTrain ?? NaN) + 0.05);
});
