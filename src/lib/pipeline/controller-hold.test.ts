import { describe, expect, it } from 'vitest';
import { FakeSource, FakeTrainer, FakeWorker, configOf, flush } from './controller.fakes';
import { Pipeline, type PipelineConfig } from './controller';
import type { TimelineEvent } from './events';
import type { HoldView } from './hold';
import type { PlayedGroup, RolloutJob } from './types';

/** A worker that remembers every job it was given (a job played twice would show here). */
class CountingWorker extends FakeWorker {
  readonly given: RolloutJob[] = [];
  override play(job: RolloutJob): Promise<PlayedGroup> {
    this.given.push(job);
    return super.play(job);
  }
}

function setup(over: Partial<PipelineConfig> = {}, workers = 2) {
  const source = new FakeSource();
  const trainer = new FakeTrainer();
  const events: TimelineEvent[] = [];
  const holds: HoldView[] = [];
  const steps: number[] = [];
  const p = new Pipeline(configOf(over), source, trainer, 'run', {
    emit: (e) => events.push(e),
    onStep: (r) => steps.push(r.version),
    onHold: (v) => holds.push(v),
  });
  const ws = Array.from({ length: workers }, () => new CountingWorker());
  ws.forEach((w, i) => p.addWorker(`w${i}`, w, `rollout-${i}`));
  p.start(0);
  const running = () => ws.reduce((n, w) => n + w.jobs.size, 0);
  const given = () => ws.flatMap((w) => w.given);
  const finishAll = async () => {
    for (const w of ws) w.finishAll(p.version);
    await flush();
  };
  const train = async () => {
    trainer.finish();
    await flush();
  };
  return { p, source, trainer, ws, events, holds, steps, running, given, finishAll, train };
}

describe('Pipeline hold (Pause / Resume / Step)', () => {
  it('Pause stops admission and the feeding of the trainer; the work in progress finishes and is kept', async () => {
    const f = setup({ eta: 2 });
    expect(f.running()).toBe(4); // both workers' slots
    f.ws[0]?.finishAll();
    await flush();
    expect(f.trainer.calls).toHaveLength(1); // the trainer computes version 1
    expect(f.running()).toBe(4); // 2 jobs started in the slots the finished ones freed
    f.p.hold.pause();
    expect(f.p.hold.view().mode).toBe('pausing');
    // The step in progress publishes; the jobs in progress finish and are kept; nothing new starts.
    await f.train();
    expect(f.p.version).toBe(1);
    expect(f.running()).toBe(4);
    await f.finishAll();
    expect(f.running()).toBe(0);
    expect(f.source.recorded).toBe(6);
    expect(f.p.accepted).toBe(6);
    expect(f.trainer.calls).toHaveLength(0); // a batch is ready, yet none is taken
    expect(f.p.hold.view()).toEqual({ mode: 'paused', version: 1, target: null });
    expect(f.holds.map((h) => `${h.mode} ${h.version}`)).toEqual(['pausing 0', 'pausing 1', 'paused 1']);
    // Held: the timer's ticks start nothing, and the timeline does not grow.
    const [jobs, events] = [f.given().length, f.events.length];
    for (let i = 0; i < 5; i++) f.p.tick();
    await flush();
    expect([f.given().length, f.events.length, f.trainer.calls.length, f.p.version]).toEqual([
      jobs,
      events,
      0,
      1,
    ]);

    // Resume: as before, the groups finished while pausing train first.
    f.p.hold.resume();
    expect(f.trainer.calls).toHaveLength(1);
    expect(f.running()).toBeGreaterThan(0);
    expect(f.holds.at(-1)?.mode).toBe('running');
    while (f.p.version < 4) {
      await f.finishAll();
      if (f.trainer.calls.length) await f.train();
    }
    // Nothing played twice, nothing lost: every job id and sample seq once, every finished group trained or waiting.
    const ids = f.given().map((j) => j.jobId);
    expect(new Set(ids).size).toBe(ids.length);
    const seqs = f.given().flatMap((j) => Array.from({ length: j.samples }, (_, i) => j.seqBase + i));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(f.p.counters.staleDrops).toBe(0);
    const trained = (f.p.counters.trainedEpisodes + (f.p.inFlight?.episodes ?? 0)) / 2; // groups of 2
    expect(trained + f.p.buffer.size + f.p.runningGroups).toBe(f.given().length);
  });

  it('Step from paused trains exactly one version, then holds; a Step while it steps is refused', async () => {
    const f = setup({ eta: 0 });
    f.p.hold.pause(); // the 2 jobs of version 0 are running
    await f.finishAll();
    expect(f.p.hold.view().mode).toBe('paused');
    expect(f.trainer.calls).toHaveLength(0);
    // The batch is ready: a Step trains it, and admits nothing after the version is published.
    expect(f.p.hold.step()).toBe(true);
    expect(f.p.hold.step()).toBe(false);
    expect(f.trainer.calls).toHaveLength(1);
    expect(f.p.hold.view()).toEqual({ mode: 'stepping', version: 0, target: 1 });
    await f.train();
    expect(f.p.version).toBe(1);
    expect(f.running()).toBe(0);
    expect(f.p.hold.view()).toEqual({ mode: 'paused', version: 1, target: null });
    f.p.tick();
    expect([f.running(), f.trainer.calls.length]).toEqual([0, 0]);
    // No batch ready: a Step plays the version's rollouts, trains them, and holds at version 2.
    f.p.hold.step();
    expect(f.running()).toBe(2);
    await f.finishAll();
    expect(f.trainer.calls).toHaveLength(1);
    await f.train();
    expect([f.p.version, f.running(), f.p.hold.view().mode]).toEqual([2, 0, 'paused']);
    expect(f.steps).toEqual([1, 2]);
    expect(f.holds.map((h) => `${h.mode} ${h.version}`)).toEqual([
      'pausing 0',
      'paused 0',
      'stepping 0',
      'paused 1',
      'stepping 1',
      'paused 2',
    ]);
  });

  it('Step while running first pauses: the step in flight publishes, then exactly one more', async () => {
    const f = setup({ eta: 1 });
    await f.finishAll();
    expect(f.trainer.calls).toHaveLength(1);
    f.p.hold.step();
    expect(f.p.hold.view().target).toBe(2);
    await f.train();
    await f.finishAll();
    expect(f.trainer.calls).toHaveLength(1);
    await f.train();
    await f.finishAll(); // the jobs admitted while it stepped finish and are kept
    expect(f.p.version).toBe(2);
    expect(f.trainer.calls).toHaveLength(0);
    expect(f.p.hold.view()).toEqual({ mode: 'paused', version: 2, target: null });
  });

  it('a job requeued while paused waits, and runs once on Resume', async () => {
    const f = setup({ eta: 2 });
    f.p.hold.pause();
    const lost = [...(f.ws[0]?.jobs.keys() ?? [])];
    expect(lost).toHaveLength(2);
    f.p.removeWorker('w0', 'crashed');
    expect(f.p.waitingGroups).toBe(2);
    f.ws[1]?.finishAll();
    await flush();
    expect(f.p.hold.view().mode).toBe('paused');
    expect(f.p.runningGroups).toBe(0);
    f.p.hold.resume();
    expect(f.p.waitingGroups).toBe(0);
    expect([...(f.ws[1]?.jobs.keys() ?? [])].sort()).toEqual(lost.sort());
  });
});
