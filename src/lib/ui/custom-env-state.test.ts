import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../storage/db';
import { trainingLock, trainingOf } from './custom-env-state.svelte';

const run = (over: Partial<RunRecord>): RunRecord => ({
  id: 'custom-a',
  name: 'custom environment',
  createdAt: 5,
  updatedAt: 6,
  status: 'finished',
  latestVersion: 12,
  config: { eta: 2, workers: 3, iterations: 40, code: 'spec = {}' },
  kind: 'custom',
  ...over,
});

describe('a stored custom training as a row of the trainings table', () => {
  it('says how it ended: finished, failed, training here or in another tab, or interrupted by a closed page', () => {
    const result = { randomReturn: 20, untrainedReturn: 21, trainedReturn: 180 };
    expect(trainingOf(run({ result }), null)).toEqual({
      runId: 'custom-a',
      startedAt: 5,
      status: 'finished',
      eta: 2,
      workers: 3,
      iterations: 12,
      asked: 40,
      result,
      code: 'spec = {}',
      config: { eta: 2, workers: 3, iterations: 40, code: 'spec = {}' },
      seconds: 0,
      nextJobId: 0,
      counters: {},
      resumable: true, // 12 of 40: stopped short
    });
    expect(trainingOf(run({ status: 'failed' }), null).status).toBe('failed');
    expect(trainingOf(run({ status: 'running' }), 'custom-a').status).toBe('running');
    // Left 'running' by a page that closed while it trained.
    expect(trainingOf(run({ status: 'running' }), 'custom-b').status).toBe('interrupted');
    // Another tab trains it: that tab holds its lock.
    expect(trainingOf(run({ status: 'running' }), null, [trainingLock('custom-a')]).status).toBe('elsewhere');
    expect(trainingOf(run({ status: 'running' }), null, [trainingLock('custom-b')]).status).toBe(
      'interrupted',
    );
  });

  it('reads what its settings lack as unknown rather than failing', () => {
    const t = trainingOf(run({ config: {}, latestVersion: -1 }), null);
    expect([t.eta, t.asked, t.iterations, t.code, t.resumable]).toEqual([NaN, NaN, 0, '', false]);
  });

  it('can be resumed when it stopped short of its iterations and nothing trains it now', () => {
    const at = (over: Partial<RunRecord>, current: string | null = null, locked: string[] = []) =>
      trainingOf(run(over), current, locked).resumable;
    expect(at({ status: 'running', progress: { seconds: 7 } })).toBe(true); // interrupted
    expect(trainingOf(run({ progress: { seconds: 7, nextJobId: 31 } }), null)).toMatchObject({
      seconds: 7,
      nextJobId: 31,
    });
    expect(at({ status: 'failed' })).toBe(true);
    expect(at({ status: 'running', latestVersion: 0 })).toBe(true); // closed before its first update
    expect(at({ latestVersion: 40 })).toBe(false); // it trained all it was asked
    expect(at({ status: 'running' }, 'custom-a')).toBe(false); // training here now
    expect(at({ status: 'running' }, null, [trainingLock('custom-a')])).toBe(false); // and in another tab
    expect(at({ latestVersion: -1 })).toBe(false); // no stored version
    expect(at({ config: { eta: 2, workers: 3, iterations: 40 } })).toBe(false); // its code is not stored
  });
});
