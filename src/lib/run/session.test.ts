import { describe, expect, it } from 'vitest';
import type { TimelineEvent } from '../pipeline/events';
import type { HoldView } from '../pipeline/hold';
import { defaultRunConfig, withOverrides } from '../config/run-config';
import type { StepReport } from '../pipeline/types';
import { memoryRollouts, memoryTrainer } from './fakes';
import { PipelineSession } from './session';

const until = async (ok: () => boolean, ms = 5_000) => {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > ms) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

async function running(hangs = () => false) {
  const t = memoryTrainer({}, hangs);
  await t.lease.start();
  expect(t.lease.acquire('run')).toBe(true);
  const rollouts = memoryRollouts();
  const steps: StepReport[] = [];
  const errors: string[] = [];
  const notices: string[] = [];
  const holds: HoldView[] = [];
  const settings = withOverrides(defaultRunConfig(2), { pipeline: { workers: 2, eta: 1 } });
  const session = new PipelineSession(
    'run-s',
    settings,
    t.trainer,
    {
      onStep: (r) => steps.push(r),
      onError: (m) => errors.push(m),
      onNotice: (m) => notices.push(m),
      onHold: (v) => holds.push(v),
    },
    null,
    rollouts.create,
  );
  await session.start();
  return { ...t, rollouts, session, steps, errors, notices, holds };
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

  it('tells of Pause and Step as they take hold; while paused nothing trains and the timeline does not grow', async () => {
    const r = await running();
    await until(() => r.steps.length >= 2);
    r.session.pipeline.hold.pause();
    await until(() => r.holds.at(-1)?.mode === 'paused');
    const [steps, pushed] = [r.steps.length, r.session.log.pushed];
    await new Promise((res) => setTimeout(res, 50));
    expect([r.steps.length, r.session.log.pushed]).toEqual([steps, pushed]);
    r.session.pipeline.hold.step();
    await until(() => r.holds.at(-1)?.mode === 'paused' && r.steps.length > steps);
    expect(r.steps.map((s) => s.version).slice(steps)).toEqual([r.holds.at(-1)?.version]);
    r.session.pipeline.hold.resume();
    await until(() => r.steps.length > steps + 2);
    await r.session.stop('paused');
    expect(r.errors).toEqual([]);
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

  it('restarts a trainer whose heartbeat goes unanswered for its bound, from the store', async () => {
    let hung = false;
    const r = await running(() => hung);
    await until(() => r.steps.length >= 1);
    hung = true; // the next heartbeat times out (the bridge's limit for it is 60 s)
    await until(() => r.session.log.events.some((e: TimelineEvent) => e.kind === 'restart'));
    hung = false;
    const restart = r.session.log.events.find((e: TimelineEvent) => e.kind === 'restart');
    expect(restart?.meta?.reason).toBe('hung: no heartbeat for 60 s');
    expect(r.calls).toContain('resume run-s');
    expect(r.lease.state.holder).toBe('run');
    await r.session.stop('paused');
    expect(r.errors).toEqual([]);
  });

  it('stops the run when the trainer keeps crashing without publishing a version', async () => {
    // A session not started: no step publishes between the crashes below.
    const t = memoryTrainer();
    await t.lease.start();
    t.lease.acquire('run');
    const errors: string[] = [];
    const s = new PipelineSession(
      'run-c',
      defaultRunConfig(2),
      t.trainer,
      { onStep: () => undefined, onError: (m) => errors.push(m), onNotice: () => undefined },
      null,
      memoryRollouts().create,
    );
    const resumes = () => t.calls.filter((c) => c === 'resume run-c').length;
    for (let i = 0; i < 4; i++) {
      t.crash(`crash ${i}`);
      // Three restarts resume the run from the store; the fourth gives the page a bare trainer.
      await until(() => t.lease.state.phase === 'ready' && (i < 3 ? resumes() === i + 1 : errors.length > 0));
    }
    expect(resumes()).toBe(3);
    expect(errors.at(-1)).toMatch(/the trainer crashed: crash 3, the 4th time without publishing a version/);
    await s.stop('failed');
  });
  it('hands the groups its controller takes to the program feed; a listener that throws is let go with a notice', async () => {
    const r = await running();
    const heard: string[] = [];
    r.session.onPlayed((job, group, lane) => heard.push(`${job.jobId}:${group.status}:${lane}`));
    r.session.onPlayed(() => {
      throw new Error('view bug');
    });
    const before = r.steps.length;
    await until(() => heard.length >= 4 && r.steps.length > before + 1);
    expect(heard.every((h) => /^\d+:done:rollout-[01]$/.test(h))).toBe(true);
    expect(
      r.notices.filter((n) => n.includes('program feed stopped following the run: view bug')),
    ).toHaveLength(1);
    expect(r.errors).toEqual([]); // the run trained on
    await r.session.stop('paused');
  });
});
