import { describe, expect, it } from 'vitest';
import type { RolloutStats } from '../../../workers/rollout.worker';
import type { TimelineEvent } from '../pipeline/events';
import { defaultSettings } from '../pipeline/run-settings';
import type { StepReport } from '../pipeline/types';
import type { RunRecord } from '../storage/db';
import { instantRollout, instantTrainer } from './fakes';
import type { RolloutHost } from './rollout-pool';
import { PipelineSession, type CodeTrainerApi, type RunTrainer } from './session';
import { TrainerLease } from './trainer-lease';

const until = async (ok: () => boolean, ms = 5_000) => {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > ms) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

/** A trainer worker in memory: it publishes at once, stores nothing, and can be made to crash. */
function fakeTrainer() {
  const train = instantTrainer();
  const calls: string[] = [];
  let version = 0;
  let crash: (m: string) => void = () => undefined;
  const api: CodeTrainerApi = {
    trainAndPublish: async (batch, info) => {
      calls.push(`train ${info.fromVersion}`);
      const out = await train.trainAndPublish(batch, info);
      version = out.version;
      return out;
    },
    resumeRun: async (init) => {
      calls.push(`resume ${init.runId}`);
      return { version, step: version, run: { id: init.runId } as RunRecord, metrics: { loss: 0.5 } };
    },
    resetPolicy: async () => ({ parameters: 0, trainable: 0 }),
    startRun: async () => ({ version: 0, publishedAt: 0 }),
    stopRun: async (runId, status) => {
      calls.push(`stop ${runId} ${status}`);
      return null;
    },
    stats: async () => ({}) as Awaited<ReturnType<CodeTrainerApi['stats']>>,
    debugFault: async () => crash('injected'),
  };
  const lease = new TrainerLease<CodeTrainerApi, string, string>({
    create: (onCrash) => {
      crash = onCrash;
      return { api, boot: async () => 'info' };
    },
  });
  const trainer: RunTrainer = { lease, onEvents: () => () => undefined };
  return { trainer, lease, calls, crash: (m: string) => crash(m) };
}

/** Rollout workers in memory, playing every job at once. */
function fakeRollouts(): {
  create: (name: string, onCrash: (m: string) => void) => RolloutHost;
  made: number;
} {
  const out = {
    made: 0,
    create: (): RolloutHost => {
      out.made += 1;
      const port = instantRollout(true);
      return {
        prepare: async () => ({ backend: 'fake' }),
        join: async () => ({ version: 0 }),
        terminate: () => undefined,
        api: {
          stats: async () => ({}) as RolloutStats,
          play: port.play,
          abort: port.abort,
          debugFault: async () => undefined,
        },
      };
    },
  };
  return out;
}

async function running() {
  const t = fakeTrainer();
  await t.lease.start();
  expect(t.lease.acquire('run')).toBe(true);
  const rollouts = fakeRollouts();
  const steps: StepReport[] = [];
  const errors: string[] = [];
  const notices: string[] = [];
  const settings = { ...defaultSettings(2), workers: 2, eta: 1 };
  const session = new PipelineSession(
    'run-s',
    settings,
    t.trainer,
    { onStep: (r) => steps.push(r), onError: (m) => errors.push(m), onNotice: (m) => notices.push(m) },
    null,
    rollouts.create,
  );
  await session.start();
  return { ...t, rollouts, session, steps, errors, notices };
}

describe('PipelineSession', () => {
  it('trains with its pool of rollout workers, and a Stop stores how the run ended', async () => {
    const r = await running();
    await until(() => r.steps.length >= 2);
    expect(r.rollouts.made).toBeGreaterThanOrEqual(2); // a lane each (and a spare)
    expect(
      r.session
        .workerStats()
        .map((w) => w.lane)
        .sort(),
    ).toEqual(['rollout-0', 'rollout-1']);
    expect(r.session.rolloutBackend).toBe('fake');
    await r.session.stop('paused');
    expect(r.calls.at(-1)).toBe('stop run-s paused');
    const stopped = r.steps.length;
    await new Promise((res) => setTimeout(res, 20));
    expect(r.steps.length).toBe(stopped); // nothing trains after the Stop
    expect(r.session.runCounters().trainSteps).toBeGreaterThanOrEqual(stopped);
  });

  it('restarts a crashed trainer from the store and goes on training, holding the trainer', async () => {
    const r = await running();
    await until(() => r.steps.length >= 1);
    r.crash('boom');
    await until(() => r.session.log.events.some((e: TimelineEvent) => e.kind === 'restart'));
    expect(r.calls).toContain('resume run-s');
    expect(r.notices.some((n) => n.includes('crashed: boom; restarting it'))).toBe(true);
    expect(r.lease.state.holder).toBe('run');
    const after = r.steps.length;
    await until(() => r.steps.length > after);
    await r.session.stop('paused');
    expect(r.errors).toEqual([]);
  });

  it('stops the run when the trainer keeps crashing without publishing a version', async () => {
    // A session not started: no step publishes between the crashes below.
    const t = fakeTrainer();
    await t.lease.start();
    t.lease.acquire('run');
    const errors: string[] = [];
    const s = new PipelineSession(
      'run-c',
      defaultSettings(2),
      t.trainer,
      { onStep: () => undefined, onError: (m) => errors.push(m), onNotice: () => undefined },
      null,
      fakeRollouts().create,
    );
    for (let i = 0; i < 4; i++) {
      t.crash(`crash ${i}`);
      await until(() => t.lease.state.phase === 'ready' && t.calls.length === Math.min(i + 1, 3));
      await new Promise((res) => setTimeout(res, 5));
    }
    expect(errors.at(-1)).toMatch(/the trainer crashed: crash 3, the 4th time without publishing a version/);
    await s.stop('failed');
  });
});
