import { describe, expect, it } from 'vitest';
import { generateTasks } from '../env/families';
import { builtInTasks } from '../env/task-kinds';
import { fakeTrajectory } from '../custom/fixture';
import { CustomJobSource, customGroup, type CustomTrajectory } from '../custom/workload';
import { defaultRunConfig, withOverrides } from '../config/run-config';
import type { RolloutPort, StepReport } from '../pipeline/types';
import { storedStepMetrics } from '../policy/metrics';
import { DEFAULT_CUSTOM_TRAIN } from '../custom/config';
import type { CustomBatch } from '../custom/trainer';
import { instantRollout, instantTrainer } from './fakes';
import { assemblePipeline, BUILT_IN_SEED, jobSourceOf, newRunId, runInit } from './pipeline';

describe('assemblePipeline', () => {
  it('assembles a code run that trains with in-process rollouts and trainer (as in node)', async () => {
    const settings = withOverrides(defaultRunConfig(2), { pipeline: { workers: 2, eta: 0 } });
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
    expect(steps[0]?.episodes).toBe(settings.learner.tasksPerBatch * settings.learner.groupSize);
    expect(rollouts.every((r) => r.played > 0)).toBe(true);
    expect(source.progress()).toBeTruthy();
  });

  it('goes on from where a resumed run stood', () => {
    const settings = defaultRunConfig(2);
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

describe('assemblePipeline for a custom environment', () => {
  it('assembles a training that plays groups of episodes and trains them, from the version it resumes', async () => {
    const config = { ...DEFAULT_CUSTOM_TRAIN, workers: 2, eta: 0, groupsPerBatch: 2 };
    const batches: CustomBatch[] = [];
    const jobs: number[] = [];
    const from: number[] = [];
    const rollout = (): RolloutPort<CustomTrajectory> => ({
      play: async (job) => {
        jobs.push(job.jobId);
        const t = fakeTrajectory([1, 0, 1], [-0.7, -0.7, -0.7], 3);
        // Played by the version the job asked for (older ones would be dropped as stale).
        const played = { ...t, versions: t.versions.map(() => job.minVersion) };
        await new Promise((r) => setTimeout(r, 1));
        return customGroup(job.jobId, { trajectories: [played], interrupted: 0 }, 0);
      },
      abort: async () => undefined,
    });
    let stepped: () => void = () => undefined;
    const twoSteps = new Promise<void>((r) => (stepped = r));
    const { pipeline, source, lanes } = assemblePipeline(
      { kind: 'custom', runId: 'custom-x', config, inputs: 3, restored: { version: 4, nextJobId: 9 } },
      {
        trainer: {
          trainAndPublish: async (batch, info) => {
            batches.push(batch);
            from.push(info.fromVersion);
            if (batches.length === 2) stepped();
            return {
              version: info.fromVersion + 1,
              metrics: storedStepMetrics({ loss: 0.5 }, 'decoupled'),
              startedAt: 0,
              publishedAt: 0,
            };
          },
        },
        rollouts: [rollout(), rollout()],
        hooks: {},
      },
    );
    expect(lanes).toEqual(['rollout-0', 'rollout-1']);
    expect(source).toBeInstanceOf(CustomJobSource);
    pipeline.start(0);
    await twoSteps;
    pipeline.stop();
    expect(from).toEqual([4, 5]); // it trains on from the version it resumed
    expect(Math.min(...jobs)).toBe(9); // job ids go on from the resumed training's
    // A batch holds groupsPerBatch groups' steps, with their observations of 3 inputs.
    expect(batches[0]?.steps).toBe(2 * 3);
    expect(batches[0]?.obs.length).toBe(2 * 3 * 3);
  });
});

describe('the pieces of a run', () => {
  it('names runs by kind and start time, and tells the trainer how to store them', () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    expect(newRunId(at)).toBe('run-2026-01-02T03-04-05-678Z');
    expect(newRunId(at, 'custom')).toBe('custom-2026-01-02T03-04-05-678Z');
    const s = defaultRunConfig(2);
    expect(runInit('run-a', s)).toMatchObject({
      runId: 'run-a',
      name: 'run-a',
      keepVersions: s.storage.keepVersions,
    });
  });

  it('draws a run without a suite of its own from the built-in tasks', () => {
    const s = defaultRunConfig(2);
    const source = jobSourceOf(s, undefined);
    const builtIn = new Set(generateTasks(BUILT_IN_SEED).map((t) => t.id));
    expect(builtIn.has(source.nextTask().task.id)).toBe(true);
  });

  it('draws a run with the compositional split from its training tasks, never a held-out one', () => {
    const s = withOverrides(defaultRunConfig(2), { task: { split: 'compositional', level: 'easy' } });
    const source = jobSourceOf(s, undefined);
    const tasks = builtInTasks('examples', BUILT_IN_SEED, 'compositional');
    const training = new Set(tasks.filter((t) => !t.heldOut).map((t) => t.id));
    const drawn = Array.from({ length: 200 }, () => source.nextTask().task.id);
    expect(drawn.every((id) => training.has(id))).toBe(true);
    // Far more distinct functions than the families split's 27 easy training tasks.
    expect(new Set(drawn).size).toBeGreaterThan(27);
  });
});
