import { describe, expect, it } from 'vitest';
import { generateTasks } from '../env/families';
import { defaultSettings } from '../pipeline/run-settings';
import type { StepReport } from '../pipeline/types';
import { instantRollout, instantTrainer } from './fakes';
import { assemblePipeline, BUILT_IN_SEED, jobSourceOf, newRunId, runInit } from './pipeline';

describe('assemblePipeline', () => {
  it('assembles a code run that trains with in-process rollouts and trainer (as in node)', async () => {
    const settings = { ...defaultSettings(2), workers: 2, eta: 0 };
    const trainer = instantTrainer();
    const rollouts = [instantRollout(), instantRollout()];
    const steps: StepReport[] = [];
    let stepped: () => void = () => undefined;
    const twoSteps = new Promise<void>((r) => (stepped = r));
    const { pipeline, source, lanes } = assemblePipeline(
      { runId: 'run-x', settings },
      {
        trainer,
        rollouts,
        hooks: {
          onStep: (r) => {
            steps.push(r);
            if (steps.length === 2) stepped();
          },
          onError: (m) => {
            throw new Error(m);
          },
        },
      },
    );
    expect(lanes).toEqual(['rollout-0', 'rollout-1']);
    pipeline.start(0);
    await twoSteps;
    pipeline.stop();
    expect(steps.map((s) => s.version)).toEqual([1, 2]);
    expect(trainer.calls.map((c) => c.fromVersion)).toEqual([0, 1]);
    // Every trained batch holds the run's groups of tasksPerBatch tasks, played by both workers.
    expect(steps[0]?.episodes).toBe(settings.code.tasksPerBatch * settings.code.groupSize);
    expect(rollouts.every((r) => r.played > 0)).toBe(true);
    expect(source.progress()).toBeTruthy();
  });

  it('goes on from where a resumed run stood', () => {
    const settings = defaultSettings(2);
    const { pipeline } = assemblePipeline(
      {
        runId: 'run-r',
        settings,
        restored: {
          version: 7,
          nextSeq: 100,
          nextJobId: 20,
          groups: [],
          superseded: [],
          progress: undefined,
          hindsight: null,
        },
      },
      { trainer: instantTrainer(), hooks: {} },
    );
    expect(pipeline.version).toBe(7);
    expect(pipeline.keys).toEqual({ nextSeq: 100, nextJobId: 20 });
  });
});

describe('the pieces of a run', () => {
  it('names runs by kind and start time, and tells the trainer how to store them', () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    expect(newRunId(at)).toBe('run-2026-01-02T03-04-05-678Z');
    expect(newRunId(at, 'custom')).toBe('custom-2026-01-02T03-04-05-678Z');
    const s = defaultSettings(2);
    expect(runInit('run-a', s)).toMatchObject({
      runId: 'run-a',
      name: 'run-a',
      keepVersions: s.keepVersions,
    });
  });

  it('draws a run without a suite of its own from the built-in tasks', () => {
    const s = defaultSettings(2);
    const source = jobSourceOf(s, undefined);
    const builtIn = new Set(generateTasks(BUILT_IN_SEED).map((t) => t.id));
    expect(builtIn.has(source.nextTask().task.id)).toBe(true);
  });
});
