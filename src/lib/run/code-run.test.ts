import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { defaultRunConfig, runConfigToJson, withOverrides } from '../config/run-config';
import { openLabDb, type LabDB } from '../storage/db';
import { loadHistory } from '../storage/history-store';
import { ensureRun } from '../storage/weights-store';
import { CodeRun, type CodeRunDeps, type CodeRunEvent } from './code-run';
import { memoryRollouts, memoryTrainer } from './fakes';

let n = 0;
const settings = withOverrides(defaultRunConfig(2), { pipeline: { workers: 2, eta: 1 } });

/** A code run over a trainer and rollouts in memory and a fresh fake IndexedDB. */
async function fixture(opts: { locked?: boolean; trainer?: ReturnType<typeof memoryTrainer> } = {}) {
  const t = opts.trainer ?? memoryTrainer();
  await t.lease.start();
  const db: LabDB = await openLabDb(`code-run-test-${n++}`);
  const held: string[] = [];
  const deps: CodeRunDeps = {
    trainer: t.trainer,
    database: async () => db,
    hold: async (runId) => {
      held.push(runId);
      return !opts.locked;
    },
    createRollout: memoryRollouts().create,
    newRunId: () => `run-${n}`,
  };
  const run = new CodeRun(deps);
  const events: CodeRunEvent[] = [];
  run.subscribe((e) => events.push(e));
  const phases = () => events.flatMap((e) => (e.kind === 'state' ? [e.phase] : []));
  const errors = () => events.flatMap((e) => (e.kind === 'error' ? [e.message] : []));
  const steps = () => events.filter((e) => e.kind === 'step').length;
  return { ...t, db, held, run, events, phases, errors, steps };
}

const until = async (ok: () => boolean, ms = 5_000) => {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > ms) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('CodeRun', () => {
  it('goes idle → starting → running → stopping → idle, holding the trainer and the run lock meanwhile', async () => {
    const f = await fixture();
    const ended = f.run.start(settings);
    expect(f.run.phase).toBe('starting');
    expect(f.lease.state.holder).toBe('run');
    await until(() => f.steps() >= 2);
    expect(f.run.phase).toBe('running');
    expect(f.run.live?.runId).toBe(f.held[0]);
    await f.run.stop();
    await ended;
    expect(f.phases()).toEqual(['starting', 'running', 'stopping', 'idle']);
    expect(f.lease.state.holder).toBeNull();
    expect(f.calls.at(-1)).toBe(`stop ${f.held[0]} paused`);
    // The run's steps are stored as they come: a reload shows its charts.
    const past = await loadHistory(f.db, f.held[0] ?? '');
    expect(past.steps.length).toBe(f.steps());
    const sessions = f.events.flatMap((e) => (e.kind === 'session' ? [e.session?.runId ?? null] : []));
    expect(sessions).toEqual([f.held[0], null]);
  });

  it('ends by itself once it reaches its limits', async () => {
    const f = await fixture();
    await f.run.start(settings, { maxIterations: 2 });
    expect(f.events.some((e) => e.kind === 'finishing')).toBe(true);
    expect(f.run.phase).toBe('idle');
    expect(f.steps()).toBeGreaterThanOrEqual(2);
  });

  it('does not start while the trainer is held elsewhere, and says so', async () => {
    const f = await fixture();
    f.lease.acquire('custom');
    await f.run.start(settings);
    expect(f.errors()).toEqual(['the trainer is busy; wait until it is ready']);
    expect(f.phases()).toEqual([]);
  });

  it('gives its start-up up when the trainer crashes meanwhile, and leaves a working trainer', async () => {
    let answer: () => void = () => undefined;
    const t = memoryTrainer({ resetPolicy: () => new Promise<void>((r) => (answer = r)) });
    const f = await fixture({ trainer: t });
    const ended = f.run.start(settings);
    await until(() => f.calls.includes('reset'));
    f.crash('boom');
    await ended;
    answer(); // the dead worker's call would never come back: nothing is built after it
    expect(f.errors()).toEqual(['the trainer worker crashed while the run started: boom']);
    expect(f.phases()).toEqual(['starting', 'stopping', 'failed']);
    expect(f.calls.filter((c) => c === 'boot')).toHaveLength(2); // started again
    expect(f.lease.state).toEqual({ phase: 'ready', holder: null, error: null });
    expect(f.run.live).toBeNull();
  });

  it('a Stop during the start-up waits for it, then stops what it built: nothing trains on', async () => {
    let answer: () => void = () => undefined;
    const t = memoryTrainer({ resetPolicy: () => new Promise<void>((r) => (answer = r)) });
    const f = await fixture({ trainer: t });
    const ended = f.run.start(settings);
    await until(() => f.calls.includes('reset'));
    const stopped = f.run.stop();
    expect(f.run.phase).toBe('stopping');
    answer();
    await Promise.all([stopped, ended]);
    expect(f.phases()).toEqual(['starting', 'stopping', 'idle']);
    expect(f.calls.at(-1)).toBe(`stop ${f.held[0]} paused`);
    const trained = f.calls.filter((c) => c.startsWith('train')).length;
    await new Promise((r) => setTimeout(r, 20));
    expect(f.calls.filter((c) => c.startsWith('train')).length).toBe(trained);
    expect(f.lease.state.holder).toBeNull();
  });

  it('resumes a stored run with its own settings, and refuses one that another tab trains', async () => {
    const f = await fixture();
    await ensureRun(f.db, {
      id: 'run-old',
      name: 'run-old',
      config: runConfigToJson(settings),
      kind: 'code',
    });
    const ended = f.run.resume('run-old');
    await until(() => f.steps() >= 1);
    await f.run.stop();
    await ended;
    const kinds = f.events.map((e) => e.kind);
    expect(kinds.indexOf('resuming')).toBeLessThan(kinds.indexOf('settings'));
    expect(kinds.indexOf('settings')).toBeLessThan(kinds.indexOf('resumed'));
    expect(f.calls).toContain('resume run-old');

    const g = await fixture({ locked: true });
    await g.run.resume('run-old');
    expect(g.errors()).toEqual(['run run-old is training in another tab of this page: stop it there first']);
    expect(g.phases()).toEqual(['starting', 'stopping', 'failed']);
    expect(g.lease.state.holder).toBeNull();
  });

  it('resumes a run that started from a built-in base this build no longer ships', async () => {
    const f = await fixture();
    const stored = runConfigToJson(settings);
    const gone = { ...stored, policy: { ...settings.policy, startFrom: { base: 'retired-base' } } };
    await ensureRun(f.db, { id: 'run-based', name: 'run-based', config: gone, kind: 'code' });
    const ended = f.run.resume('run-based');
    await until(() => f.steps() >= 1 || f.errors().length > 0);
    await f.run.stop();
    await ended;
    expect(f.errors()).toEqual([]);
    expect(f.calls).toContain('resume run-based');
  });

  it("passes on the trainer's word that a resume starts with fresh optimiser moments", async () => {
    const notice = 'version 40 kept no optimiser state: Adam starts with fresh moments';
    const f = await fixture({ trainer: memoryTrainer({ resumeNotice: notice }) });
    await ensureRun(f.db, {
      id: 'run-pruned',
      name: 'run-pruned',
      config: runConfigToJson(settings),
      kind: 'code',
    });
    const ended = f.run.resume('run-pruned');
    await until(() => f.steps() >= 1);
    await f.run.stop();
    await ended;
    expect(f.events).toContainEqual({ kind: 'notice', message: notice });
  });

  it('Pause holds the running run, Step trains exactly one version and holds, Resume goes on', async () => {
    const f = await fixture();
    expect(f.run.pause()).toBe(false); // no run to hold
    const ended = f.run.start(settings);
    await until(() => f.steps() >= 2);
    expect(f.run.pause()).toBe(true);
    await until(() => f.run.hold?.mode === 'paused'); // the work in progress finished
    const at = f.run.live?.pipeline.version ?? NaN;
    expect(f.run.hold).toEqual({ mode: 'paused', version: at, target: null });
    const trains = () => f.calls.filter((c) => c.startsWith('train')).length;
    const [steps, trained, played] = [f.steps(), trains(), f.run.clock().episodes];
    await new Promise((r) => setTimeout(r, 50));
    expect([f.steps(), trains(), f.run.clock().episodes, f.run.live?.pipeline.version]).toEqual([
      steps,
      trained,
      played,
      at,
    ]);
    expect(f.run.phase).toBe('running'); // held, with its session, workers and trainer

    const holds = () => f.events.flatMap((e) => (e.kind === 'hold' ? [e.hold.mode] : []));
    const before = holds().length;
    expect(f.run.step()).toBe(true);
    await until(() => f.run.hold?.mode === 'paused' && f.run.hold.version > at);
    await new Promise((r) => setTimeout(r, 50));
    expect(f.run.live?.pipeline.version).toBe(at + 1);
    expect([f.steps(), trains()]).toEqual([steps + 1, trained + 1]);
    // The view heard it step, then hold (its jobs in flight finishing in between, if any).
    expect([holds()[before], holds().at(-1)]).toEqual(['stepping', 'paused']);

    expect(f.run.unpause()).toBe(true);
    await until(() => f.steps() >= steps + 4);
    expect(f.run.hold?.mode).toBe('running');
    // A Stop ends a paused run as it ends a running one.
    f.run.pause();
    await f.run.stop();
    await ended;
    expect(f.phases()).toEqual(['starting', 'running', 'stopping', 'idle']);
    expect(f.calls.at(-1)).toBe(`stop ${f.held[0]} paused`);
    expect([f.run.hold, f.run.step()]).toEqual([null, false]);
  });

  it('fails with a sticky error that later errors do not replace', async () => {
    const f = await fixture();
    const ended = f.run.start(settings);
    await until(() => f.run.phase === 'running');
    await f.run.fail('the storage went away', true);
    await ended;
    await f.run.fail('a write failed');
    expect(f.errors()).toEqual(['the storage went away', 'the storage went away']);
    expect(f.run.phase).toBe('failed');
  });
});
