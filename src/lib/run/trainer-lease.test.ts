import { describe, expect, it } from 'vitest';
import { WorkerCrashed } from '../bridge/worker-errors';
import { MAX_RESTARTS_PER_VERSION, statusOf, TrainerLease, type LeaseEvent } from './trainer-lease';

/**
 * A trainer whose boots answer when told to, and whose worker can be made to crash: as a bridge
 * does, the crash rejects the boot in flight (after the lease heard of it).
 */
function fixture() {
  let onCrash: (message: string) => void = () => undefined;
  const boots: { backends: string[] | undefined; answer: (ok: boolean) => void; fail: (e: Error) => void }[] =
    [];
  const inFlight = new Set<(e: Error) => void>();
  let clock = 0;
  const api = { ping: () => 'pong' };
  const lease = new TrainerLease<{ ping(): string }, string, string>({
    create: (heard) => {
      onCrash = heard;
      return {
        api,
        withTimeout: () => api,
        boot: (backends) =>
          new Promise<string>((resolve, reject) => {
            const fail = (e: Error) => {
              inFlight.delete(fail);
              reject(e);
            };
            inFlight.add(fail);
            boots.push({
              backends,
              answer: (ok) => {
                inFlight.delete(fail);
                if (ok) resolve(`info-${boots.length}`);
                else reject(new Error('no backend'));
              },
              fail,
            });
          }),
      };
    },
    now: () => clock,
  });
  const crash = (m: string) => {
    const cut = [...inFlight]; // the crashed worker's calls, not those of a restart made on hearing of it
    onCrash(m);
    for (const fail of cut) fail(new WorkerCrashed(m, 'the trainer worker'));
  };
  const events: LeaseEvent[] = [];
  lease.subscribe((e) => events.push(e));
  const started = async (backends?: string[]) => {
    const p = lease.start(backends);
    boots.at(-1)?.answer(true);
    return p;
  };
  return {
    lease,
    boots,
    events,
    started,
    crash,
    tick: (ms: number) => (clock += ms),
  };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe('TrainerLease', () => {
  it('hands a ready trainer to one holder at a time; a stale release does nothing', async () => {
    const f = fixture();
    expect(f.lease.acquire('run')).toBe(false); // not started
    expect(await f.started(['webgpu'])).toBe('info-1');
    expect(f.lease.state).toEqual({ phase: 'ready', holder: null, error: null });
    expect(f.lease.acquire('run')).toBe(true);
    expect(f.lease.acquire('custom')).toBe(false);
    f.lease.release('custom');
    expect(f.lease.state.holder).toBe('run');
    f.lease.release('run');
    expect(f.lease.acquire('custom')).toBe(true);
    expect(f.lease.api.ping()).toBe('pong');
  });

  it('reports each change of state to its subscribers, and a failed boot as an error', async () => {
    const f = fixture();
    const p = f.lease.start();
    f.boots[0]?.answer(false);
    expect(await p).toBeNull();
    const phases = f.events.flatMap((e) => (e.kind === 'state' ? [e.state.phase] : []));
    expect(phases).toEqual(['starting', 'error']);
    expect(f.lease.state.error).toBe('no backend');
  });

  it('restarts a crashed worker on the same backends, freeing it, unless a holder takes the crashes', async () => {
    const f = fixture();
    await f.started(['wasm']);
    f.lease.acquire('store');
    f.crash('boom');
    expect(f.lease.state.phase).toBe('starting');
    expect(f.boots[1]?.backends).toEqual(['wasm']);
    f.boots[1]?.answer(true);
    await settle();
    expect(f.lease.state).toEqual({ phase: 'ready', holder: null, error: null });
    expect(f.events.filter((e) => e.kind === 'restarted')).toEqual([{ kind: 'restarted', message: 'boom' }]);

    // A run restarts the trainer itself: the lease hears the crash and leaves it to the run.
    f.lease.acquire('run');
    const heard: string[] = [];
    const off = f.lease.takeCrashes((m) => heard.push(m));
    f.crash('again');
    expect(heard).toEqual(['again']);
    expect(f.lease.state).toEqual({ phase: 'ready', holder: 'run', error: null });
    expect(f.events.filter((e) => e.kind === 'crashed')).toHaveLength(2);
    off();
    f.crash('third');
    expect(f.lease.state.phase).toBe('starting');
  });

  it('leaves a worker that crashes while starting, or more than three times a minute, in error', async () => {
    const f = fixture();
    const starting = f.lease.start();
    f.crash('while starting');
    expect(await starting).toBeNull(); // its boot was rejected: it does not wait for ever
    expect(f.lease.state).toEqual({
      phase: 'error',
      holder: null,
      error: 'trainer worker crashed: while starting',
    });

    const g = fixture();
    await g.started();
    for (let i = 0; i < 3; i++) {
      g.tick(1_000);
      g.crash(`crash ${i}`);
      g.boots.at(-1)?.answer(true);
      await settle();
      expect(g.lease.state.phase).toBe('ready');
    }
    g.crash('a fourth within the minute');
    expect(g.lease.state.phase).toBe('error');

    // Crashes older than a minute no longer count.
    const h = fixture();
    await h.started();
    for (let i = 0; i < 4; i++) {
      h.tick(30_000);
      h.crash(`crash ${i}`);
      h.boots.at(-1)?.answer(true);
      await settle();
    }
    expect(h.lease.state.phase).toBe('ready');
  });

  it('allows a crash taker three restarts at one version, counting afresh at a newer version or a new taker', async () => {
    const f = fixture();
    await f.started();
    f.lease.takeCrashes(() => undefined);
    const counts = [5, 5, 5, 5].map((v) => f.lease.countRestart(v));
    expect(counts).toEqual([
      { allowed: true, count: 1 },
      { allowed: true, count: 2 },
      { allowed: true, count: 3 },
      { allowed: false, count: 4 },
    ]);
    expect(MAX_RESTARTS_PER_VERSION).toBe(3);
    // A version published since: the count starts again.
    expect(f.lease.countRestart(6)).toEqual({ allowed: true, count: 1 });
    expect(f.lease.countRestart(6).count).toBe(2);
    // The next run's session takes the crashes anew: its restarts are its own.
    f.lease.takeCrashes(() => undefined);
    expect(f.lease.countRestart(6)).toEqual({ allowed: true, count: 1 });
  });

  it("names the lease's phase as the page shows it, or who holds a ready trainer", () => {
    expect(statusOf({ phase: 'starting', holder: null, error: null })).toBe('starting');
    expect(statusOf({ phase: 'error', holder: null, error: 'no backend' })).toBe('error');
    expect(statusOf({ phase: 'ready', holder: null, error: null })).toBe('ready');
    expect(statusOf({ phase: 'ready', holder: 'panel', error: null })).toBe('training');
    expect(statusOf({ phase: 'ready', holder: 'run', error: null })).toBe('busy');
    expect(statusOf({ phase: 'ready', holder: 'custom', error: null })).toBe('busy');
    expect(statusOf({ phase: 'ready', holder: 'store', error: null })).toBe('busy');
  });

  it('ignores the outcome of a start that a later start overtook', async () => {
    const f = fixture();
    const first = f.lease.start();
    const second = f.lease.start();
    f.boots[1]?.answer(true);
    await second;
    f.boots[0]?.answer(false);
    await first;
    expect(f.lease.state.phase).toBe('ready');
  });
});
