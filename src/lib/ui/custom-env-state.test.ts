import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { PageStorage } from '../run/browser';
import type { CustomTrainerPort } from '../run/custom-run';
import { openLabDb, type MlpWeightsRecord, type RunRecord } from '../storage/db';
import { CustomEnvState } from './custom-env-state.svelte';

const unused = () => Promise.reject(new Error('not called here'));

/** A trainer that other work holds: the panel must not train with it. */
const busyTrainer: CustomTrainerPort = {
  status: 'busy',
  lease: {
    state: { phase: 'ready', holder: 'run', error: null },
    acquire: () => false,
    release: () => undefined,
  },
  api: {
    initCustom: unused,
    resumeCustom: unused,
    publishCustom: unused,
    trainAndPublishCustom: unused,
    stats: unused,
  },
  onCrash: () => () => undefined,
  onEvents: () => () => undefined,
  restart: async () => undefined,
};

const stored = (id: string, createdAt: number): RunRecord => ({
  id,
  name: 'custom environment',
  createdAt,
  updatedAt: createdAt,
  status: 'finished',
  latestVersion: 4,
  config: { eta: 1, workers: 1, iterations: 8, code: `// ${id}` },
  kind: 'custom',
});

const version = (runId: string, v: number): MlpWeightsRecord => ({
  runId,
  version: v,
  createdAt: 0,
  metrics: {},
  milestone: false,
  checkpoint: {
    format: 'sandbox-rl-lab/mlp@1',
    mlp: { inputs: 1, hidden: 1, actions: 2 },
    params: { entries: [], data: new ArrayBuffer(0) },
    step: v,
  },
});

describe('the custom environment panel’s state', () => {
  it('says why Train does nothing while the trainer is held, and stays idle', async () => {
    const env = new CustomEnvState(busyTrainer, new PageStorage());
    await env.train();
    expect(env.error).toBe('the trainer is busy; wait until it is ready');
    expect([env.training, env.stopping, env.phase, env.trainerStatus]).toEqual([false, false, null, 'busy']);
  });

  it('lists the stored trainings, puts one’s code in the editor, resumes or deletes it by its row', async () => {
    const db = await openLabDb();
    await db.put('runs', stored('custom-b', 20));
    await db.put('runs', stored('custom-a', 10));
    for (const v of [0, 4]) await db.put('weights', version('custom-a', v));
    db.close();
    const env = new CustomEnvState(busyTrainer, new PageStorage());
    await env.loadTrainings();
    expect(env.trainings.map((t) => [t.runId, t.status, t.resumable])).toEqual([
      ['custom-a', 'finished', true],
      ['custom-b', 'finished', true],
    ]);
    env.useCode('custom-b');
    expect([env.code, env.notice]).toEqual([
      '// custom-b',
      'The editor now holds the code training 2 trained on.',
    ]);
    await env.resume('custom-a');
    expect(env.error).toBe('the trainer is busy; wait until it is ready');
    await env.deleteTraining('custom-a');
    expect(env.notice).toBe('Deleted training 1 and its 2 stored versions.');
    expect(env.trainings.map((t) => t.runId)).toEqual(['custom-b']);
  });
});
