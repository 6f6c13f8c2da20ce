import { describe, expect, it } from 'vitest';
import type { RolloutStats } from '../../../workers/rollout.worker';
import type { TimelineEvent } from '../pipeline/events';
import { DEFAULT_CUSTOM_TRAIN } from '../custom/config';
import type { CustomRunEvent, CustomTrainerPort } from './custom-run';
import { CustomSession, MEASURER_NAME, STOPPED_NOW, type CustomRolloutWorker } from './custom-session';

const refuse = () => Promise.reject(new Error('not called here'));

/** A session's workers that never answer its setup: what it holds, and what it let go. */
function parts() {
  const held = { trainerEvents: 0, crashes: 0, terminated: [] as string[] };
  let push: (events: TimelineEvent[]) => void = () => undefined;
  const trainer: CustomTrainerPort = {
    status: 'busy',
    lease: {
      state: { phase: 'ready', holder: 'custom', error: null },
      acquire: () => false,
      release: () => undefined,
    },
    api: {
      initCustom: refuse,
      resumeCustom: refuse,
      publishCustom: refuse,
      trainAndPublishCustom: refuse,
      stats: refuse,
    },
    onCrash: () => {
      held.crashes += 1;
      return () => (held.crashes -= 1);
    },
    onEvents: (listener) => {
      held.trainerEvents += 1;
      push = listener;
      return () => (held.trainerEvents -= 1);
    },
    restart: async () => undefined,
  };
  const never = () => new Promise<never>(() => undefined);
  const worker = (name: string): CustomRolloutWorker => ({
    prepare: refuse,
    join: refuse,
    terminate: () => void held.terminated.push(name),
    api: {
      stats: async () => ({}) as RolloutStats,
      play: refuse,
      abort: async () => undefined,
      debugFault: async () => undefined,
      startCustom: refuse,
      playCustom: refuse,
      abortCustom: async () => undefined,
      openCustomEnv: never,
      customRandomReturn: never,
      adoptStoredCustom: never,
      customReturn: never,
    },
  });
  const events: CustomRunEvent[] = [];
  const session = new CustomSession(
    'custom-s',
    { kind: 'new', config: DEFAULT_CUSTOM_TRAIN, code: 'env' },
    {
      trainer,
      rolloutBridge: (name) => worker(name),
      catalog: { hold: refuse, show: refuse, storeBaselines: refuse, settle: refuse },
    },
    {
      event: (e) => events.push(e),
      fail: () => undefined,
      failed: () => false,
      stopping: () => false,
      claimed: () => undefined,
      running: () => undefined,
      stored: () => undefined,
    },
  );
  return { session, held, events, push: (e: TimelineEvent[]) => push(e) };
}

describe('a custom session', () => {
  it('puts the trainer’s marks on its timeline, and says what a full quota evicted', () => {
    const p = parts();
    p.push([
      { lane: 'trainer', kind: 'train-step', t0: 0, t1: 1, version: 0 },
      { lane: 'store', kind: 'evict', t0: 1, t1: 1, version: 1, meta: { reason: 'quota', versions: 3 } },
    ]);
    expect(p.session.log.events.map((e) => e.kind)).toEqual(['train-step', 'evict']);
    expect(p.events).toEqual([{ type: 'notice', message: expect.stringContaining('3') }]);
  });

  it('"Stop now" gives up a setup that never answers; dispose lets go of the trainer and ends the measuring worker', async () => {
    const p = parts();
    expect([p.held.crashes, p.held.trainerEvents]).toEqual([1, 1]);
    const running = p.session.run();
    p.session.endNow('setting up');
    await expect(running).rejects.toBe(STOPPED_NOW);
    expect(p.session.stoppedNow).toBe('setting up');
    expect(p.session.reached).toBe(0);
    p.session.dispose();
    expect([p.held.crashes, p.held.trainerEvents, p.held.terminated]).toEqual([0, 0, [MEASURER_NAME]]);
  });
});
