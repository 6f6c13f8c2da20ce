import { describe, expect, it } from 'vitest';
import { defaultRunConfig, type RunConfig } from '../config/run-config';
import type { TaskSuite } from '../env/suite';
import { howLabel, resumable, startFromOf, startFromValue, trainsLabel } from './labels';

describe('resumable', () => {
  const run = (status: 'created' | 'running' | 'paused' | 'finished' | 'failed', latestVersion = 3) => ({
    id: 'run-a',
    status,
    latestVersion,
  });

  it('lets a run go on that was interrupted, paused or failed with a stored version', () => {
    expect(resumable(run('running'), false, null)).toBe(true);
    expect(resumable(run('paused'), false, null)).toBe(true);
    // A full quota or a crash fails the run; what it stored is intact, and Resume goes on from it.
    expect(resumable(run('failed'), false, null)).toBe(true);
  });

  it('refuses a run without a version, a finished one, and one that a tab trains now', () => {
    expect(resumable(run('failed', -1), false, null)).toBe(false);
    expect(resumable(run('created', -1), false, null)).toBe(false);
    expect(resumable(run('finished'), false, null)).toBe(false);
    expect(resumable(run('running'), true, null)).toBe(false);
    expect(resumable(run('running'), false, 'run-a')).toBe(false);
    expect(resumable(run('paused'), false, 'run-b')).toBe(true);
  });
});

describe('the run list labels', () => {
  const D = defaultRunConfig();
  /** What a run of the default config with these policy fields and this suite trains. */
  const trains = (policy: Partial<RunConfig['policy']>, suite: TaskSuite | null = null) =>
    trainsLabel({ policy: { ...D.policy, ...policy }, task: { ...D.task, suite } });
  /** How a run of the default config with these pipeline and learner fields runs. */
  const how = (pipeline: Partial<RunConfig['pipeline']>, learner: Partial<RunConfig['learner']> = {}) =>
    howLabel({ pipeline: { ...D.pipeline, ...pipeline }, learner: { ...D.learner, ...learner } });

  it('say what a run trains, on what, and from which run it started', () => {
    const tasks = { name: 'mine', tasks: [{ id: 't', level: 'easy' as const, examples: [], hidden: [] }] };
    expect(trains({ lora: null })).toBe('every parameter');
    expect(trains({ lora: null }, tasks)).toBe('every parameter, on "mine" (1 task)');
    // A run started from another one said only "LoRA, rank 4", like one from fresh weights.
    expect(trains({ lora: { rank: 4, alpha: 8 }, startFrom: { runId: 'run-a', version: 12 } })).toBe(
      'LoRA, rank 4, from run-a version 12',
    );
    expect(trains({ lora: null, startFrom: { base: 'easy-half' } })).toBe(
      'every parameter, from the built-in base: half the easy tasks solved',
    );
    // A stored run from a base this build does not ship still gets its label.
    const gone = { base: 'retired' } as unknown as { base: 'easy-half' };
    expect(trains({ lora: null, startFrom: gone })).toBe('every parameter, from the base retired');
    expect(how({ eta: Infinity }, { loss: 'ppo' })).toBe('η = ∞, PPO clip');
    expect(how({ eta: 4 }, { loss: 'decoupled', updatesPerBatch: 1 })).toBe('η = 4, decoupled PPO');
    expect(how({ eta: 4 }, { loss: 'decoupled', updatesPerBatch: 2 })).toBe(
      'η = 4, decoupled PPO, 2 updates / batch',
    );
    expect(how({ eta: 0, playLag: 16 }, { loss: 'ppo', updatesPerBatch: 4 })).toBe(
      'staleness held at 16, PPO clip, 4 updates / batch',
    );
    expect(how({ eta: 0, playLag: 0 }, { loss: 'ppo' })).toBe('η = 0, PPO clip');
  });
});

describe('the start-from select', () => {
  const runs = [{ id: 'run-a', latestVersion: 40 }];
  it('names fresh weights, a built-in base and a stored run’s newest version, and back', () => {
    for (const from of [null, { base: 'easy-half' as const }, { runId: 'run-a', version: 40 }])
      expect(startFromOf(startFromValue(from), runs)).toEqual(from);
    expect(startFromValue({ base: 'easy-half' })).toBe('base:easy-half');
    // A name that is neither a base nor a stored run starts from fresh weights.
    expect(startFromOf('base:nothing', runs)).toBeNull();
    expect(startFromOf('run-gone', runs)).toBeNull();
  });
});
