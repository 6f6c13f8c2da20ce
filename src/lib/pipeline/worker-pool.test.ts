import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Lane, TimelineEvent } from './events';
import { WorkerPool, type PoolWorker } from './worker-pool';

class FakeWorker implements PoolWorker {
  hung = false;
  /** Answers heartbeats after this long (0: at once). */
  answerMs = 0;
  /** Busy: its event loop does not turn (pings wait), but its progress counter moves. */
  busy = false;
  terminated = false;
  private counter = 0;
  /** Its progress counter; none where memory is not shared (`withCounter` false). */
  readonly beacon?: () => number;
  constructor(
    readonly n: number,
    withCounter = true,
  ) {
    if (withCounter)
      this.beacon = () => {
        if (this.busy) this.counter += 1;
        return this.counter;
      };
  }
  ping(): Promise<unknown> {
    if (this.hung || this.busy) return new Promise(() => undefined);
    return this.answerMs
      ? new Promise((r) => setTimeout(() => r(true), this.answerMs))
      : Promise.resolve(true);
  }
  /** One step of progress, by hand. */
  bump(): void {
    this.counter += 1;
  }
  terminate(): void {
    this.terminated = true;
  }
}

function pool(
  lanes: Lane[] = ['rollout-0', 'rollout-1'],
  spares = 0,
  withCounter = true,
  opts: {
    join?: (w: FakeWorker, crash: (m: string) => void) => Promise<void>;
    /** How worker n's start goes: 'hang' never answers, 'crash' reports a crash and never answers. */
    start?: (n: number) => 'ok' | 'hang' | 'crash';
    startMs?: number;
  } = {},
) {
  let spawned = 0;
  const crashers = new Map<Lane, (m: string) => void>();
  const joined: [Lane, number][] = [];
  const lost: [Lane, string][] = [];
  const events: TimelineEvent[] = [];
  const errors: string[] = [];
  const workers: FakeWorker[] = [];
  const routes = new Map<FakeWorker, (m: string) => void>();
  /** Workers whose start the pool gave up (it aborted their `giveUp` signal). */
  const givenUp: number[] = [];
  const p = new WorkerPool<FakeWorker>(
    lanes,
    {
      prepare: async (onCrash, giveUp) => {
        const n = spawned++;
        giveUp.addEventListener('abort', () => givenUp.push(n));
        const how = opts.start?.(n) ?? 'ok';
        if (how === 'crash') onCrash(`worker ${n} died starting`);
        if (how !== 'ok') return new Promise<FakeWorker>(() => undefined);
        const w = new FakeWorker(n, withCounter);
        workers.push(w);
        routes.set(w, onCrash);
        return w;
      },
      join: async (w, lane) => {
        const crash = routes.get(w) ?? (() => undefined);
        await opts.join?.(w, crash);
        crashers.set(lane, crash);
      },
      joined: (lane, w) => joined.push([lane, w.n]),
      lost: (lane, reason) => lost.push([lane, reason]),
      emit: (e) => events.push(e),
      onError: (m) => errors.push(m),
    },
    {
      heartbeatMs: 100,
      pingMs: 100,
      hangMs: 300,
      adaptFactor: 2,
      adaptWindowMs: 5_000,
      maxHangMs: 1_500,
      blockedMs: 2_000,
      spares,
      startMs: opts.startMs ?? 60_000,
    },
  );
  return { p, crashers, joined, lost, events, errors, workers, routes, givenUp };
}

/**
 * Makes the faked clock stallable: `stall(ms)` lets `ms` pass while no timer can run (a busy main
 * thread, a hidden tab's throttled timers). Call after `vi.useFakeTimers()`.
 */
function stallableClock(): (ms: number) => void {
  const clock = performance.now.bind(performance);
  let stalled = 0;
  vi.spyOn(performance, 'now').mockImplementation(() => clock() + stalled);
  return (ms) => {
    stalled += ms;
  };
}

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('WorkerPool', () => {
  it('spawns every lane and hands each worker over', async () => {
    const { p, joined } = pool();
    await p.start();
    expect(joined).toEqual([
      ['rollout-0', 0],
      ['rollout-1', 1],
    ]);
    expect(p.workers()).toHaveLength(2);
    p.close();
  });

  it('replaces a crashed worker at once, after its work was taken back', async () => {
    const { p, crashers, joined, lost, workers, events, routes } = pool();
    await p.start();
    crashers.get('rollout-1')?.('boom');
    await vi.waitFor(() => expect(joined).toHaveLength(3));
    expect(lost).toEqual([['rollout-1', 'crashed: boom']]);
    expect(workers[1]?.terminated).toBe(true);
    expect(joined[2]).toEqual(['rollout-1', 2]);
    expect(p.faults[0]?.reason).toBe('crashed');
    expect(p.faults[0]?.replacedAt).not.toBeNull();
    expect(events.some((e) => e.kind === 'restart' && e.lane === 'rollout-1')).toBe(true);
    // A second crash report from the dead incarnation is ignored.
    routes.get(workers[1] as FakeWorker)?.('again');
    expect(lost).toHaveLength(1);
    expect(p.faults).toHaveLength(1);
    p.close();
  });

  it('a spare started beforehand takes over, and a new spare is started', async () => {
    const { p, crashers, joined, workers } = pool(['rollout-0', 'rollout-1'], 1);
    await p.start();
    await vi.waitFor(() => expect(workers).toHaveLength(3)); // two lanes and a spare
    crashers.get('rollout-0')?.('boom');
    await vi.waitFor(() => expect(joined).toHaveLength(3));
    expect(joined[2]).toEqual(['rollout-0', 2]); // the spare, prepared before the crash
    await vi.waitFor(() => expect(workers).toHaveLength(4)); // the next spare
    // The promoted spare's crash reports now reach the pool.
    crashers.get('rollout-0')?.('again');
    await vi.waitFor(() => expect(joined).toHaveLength(4));
    expect(joined[3]).toEqual(['rollout-0', 3]);
    p.close();
    await vi.waitFor(() => expect(workers.every((w) => w.terminated)).toBe(true)); // spares too
  });

  it('declares a worker whose heartbeat goes unanswered hung within heartbeat + hang time', async () => {
    vi.useFakeTimers();
    const { p, lost, workers } = pool(['rollout-0']);
    await p.start();
    const w = workers[0] as FakeWorker;
    await vi.advanceTimersByTimeAsync(250);
    expect(lost).toHaveLength(0); // healthy: every ping answered
    w.hung = true;
    await vi.advanceTimersByTimeAsync(250);
    expect(lost).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(200);
    expect(lost[0]?.[1]).toMatch(/^hung: no sign of life for \d+ ms \(bound 300 ms\)/);
    expect(w.terminated).toBe(true);
    expect(p.workers()[0]?.worker).not.toBe(w);
    p.close();
  });

  it('keeps a worker too busy to answer while its progress counter moves, up to the blocked bound', async () => {
    vi.useFakeTimers();
    const { p, lost, workers } = pool(['rollout-0']);
    await p.start();
    const w = workers[0] as FakeWorker;
    w.busy = true;
    // Far past the hang bound (300 ms) without an answer: alive, its counter moves.
    await vi.advanceTimersByTimeAsync(1_500);
    expect(lost).toHaveLength(0);
    // Its counter stops too: hung within heartbeat + hang time.
    w.busy = false;
    w.hung = true;
    await vi.advanceTimersByTimeAsync(450);
    expect(lost[0]?.[1]).toMatch(/^hung: no sign of life/);
    p.close();
  });

  it('raises the hang bound to twice the longest silence a healthy worker ended, within the window', async () => {
    vi.useFakeTimers();
    const { p, lost, workers } = pool(['rollout-0']);
    await p.start();
    const w = workers[0] as FakeWorker;
    w.hung = true; // no heartbeat answered from here on: only the counter shows life
    // Beats every 100 ms: a bump is seen at the next one, and ends the silence since the last.
    await vi.advanceTimersByTimeAsync(150);
    w.bump();
    await vi.advanceTimersByTimeAsync(100);
    expect(p.hangBound()).toBe(400); // a silence of 200 ms
    await vi.advanceTimersByTimeAsync(200);
    w.bump();
    await vi.advanceTimersByTimeAsync(100);
    expect(p.hangBound()).toBe(600); // 300 ms
    // A silence of 500 ms is now within the bound; one past 600 ms is a hang.
    await vi.advanceTimersByTimeAsync(500);
    expect(lost).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(200);
    expect(lost[0]?.[1]).toMatch(/^hung: no sign of life for 7\d\d ms \(bound 600 ms\)/);
    // Past the window the bound falls back.
    await vi.advanceTimersByTimeAsync(6_000);
    expect(p.hangBound()).toBe(300);
    p.close();
  });

  it('holds a worker without a progress counter (memory not shared) to the largest bound', async () => {
    vi.useFakeTimers();
    const { p, lost, workers } = pool(['rollout-0'], 0, false);
    await p.start();
    const w = workers[0] as FakeWorker;
    w.hung = true;
    // A heartbeat alone waits for two event loops: 300 ms would replace healthy workers.
    await vi.advanceTimersByTimeAsync(1_400);
    expect(lost).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(300);
    expect(lost[0]?.[1]).toMatch(/^hung: no sign of life for 1\d{3} ms \(bound 1500 ms\)/);
    p.close();
  });

  it('finds two of three workers hung together as soon as one alone', async () => {
    vi.useFakeTimers();
    const { p, lost, workers } = pool(['rollout-0', 'rollout-1', 'rollout-2']);
    await p.start();
    const [a, b] = workers as [FakeWorker, FakeWorker];
    a.hung = true;
    b.hung = true;
    await vi.advanceTimersByTimeAsync(450);
    expect(lost.map(([lane]) => lane).sort()).toEqual(['rollout-0', 'rollout-1']);
    p.close();
  });

  it('does not count a late heartbeat round (the main thread stalled) against the workers, up to the largest bound', async () => {
    vi.useFakeTimers();
    const stall = stallableClock();
    const { p, lost, workers } = pool(['rollout-0', 'rollout-1']);
    await p.start();
    const [w, healthy] = workers as [FakeWorker, FakeWorker];
    healthy.answerMs = 30; // its answer to a heartbeat sent before the stall is handled after it
    await vi.advanceTimersByTimeAsync(150);
    w.hung = true;
    await vi.advanceTimersByTimeAsync(100); // a heartbeat goes out, unanswered
    stall(1_000); // 1 s in which no round ran (the healthy worker's answer waits in the queue)
    await vi.advanceTimersByTimeAsync(100);
    expect(lost).toHaveLength(0);
    // Nor does the stall raise the bound, though the healthy worker's answer came before the round.
    expect(p.hangBound()).toBe(300);
    expect(healthy.terminated).toBe(false);
    // A real hang is still found, within the bound after the stall.
    await vi.advanceTimersByTimeAsync(400);
    expect(lost.map(([lane]) => lane)).toEqual(['rollout-0']);
    expect(lost[0]?.[1]).toMatch(
      /^hung: no sign of life for 1\d{3} ms \(bound 300 ms, \d{3,4} of them the page's own delay\)/,
    );
    p.close();
  });

  it('finds a hang within the largest bound of wall time however late every round comes (a hidden tab)', async () => {
    vi.useFakeTimers();
    const stall = stallableClock();
    const { p, lost, workers } = pool(['rollout-0']);
    await p.start();
    (workers[0] as FakeWorker).hung = true;
    await vi.advanceTimersByTimeAsync(100); // a round on time: a heartbeat goes out, unanswered
    // Every round 900 ms late: lateness alone would excuse all but 100 ms of each 1 000.
    stall(900);
    await vi.advanceTimersByTimeAsync(100);
    expect(lost).toHaveLength(0);
    stall(900);
    await vi.advanceTimersByTimeAsync(100); // 2 s of wall time: past the 1.5 s bound
    expect(lost[0]?.[1]).toMatch(/^hung: no sign of life for \d{4} ms/);
    p.close();
  });

  it('declares hung a worker whose counter moves but whose event loop never turns, at the blocked bound', async () => {
    vi.useFakeTimers();
    const { p, lost, workers } = pool(['rollout-0']);
    await p.start();
    const w = workers[0] as FakeWorker;
    w.busy = true;
    await vi.advanceTimersByTimeAsync(1_900);
    expect(lost).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(300);
    expect(lost[0]?.[1]).toMatch(/^hung: working, but no heartbeat answered for \d+ ms/);
    p.close();
  });

  it('a replacement that crashes while it joins the run is given up and followed by another', async () => {
    // The dead worker never answered its join: its lane stayed empty for good, and no error said so.
    const { p, crashers, joined, workers, errors } = pool(['rollout-0'], 0, true, {
      join: (w, crash) => {
        if (w.n !== 1) return Promise.resolve();
        crash('died joining');
        return new Promise(() => undefined);
      },
    });
    await p.start();
    crashers.get('rollout-0')?.('boom');
    await vi.waitFor(() =>
      expect(joined).toEqual([
        ['rollout-0', 0],
        ['rollout-0', 2],
      ]),
    );
    expect(workers[1]?.terminated).toBe(true);
    expect(p.faults[0]?.replacedAt).not.toBeNull();
    expect(errors).toEqual([]);
    p.close();
  });

  it('a worker whose join never answers is given up after startMs, and one that keeps failing is reported', async () => {
    const { p, crashers, joined, workers, errors } = pool(['rollout-0'], 0, true, {
      join: (w) => (w.n === 0 ? Promise.resolve() : new Promise(() => undefined)),
      startMs: 150,
    });
    await p.start();
    crashers.get('rollout-0')?.('boom');
    // Two tries (worker 1, then worker 2), each given up at 150 ms.
    await vi.waitFor(() => expect(errors).toHaveLength(1), { timeout: 2_000 });
    expect(errors[0]).toMatch(/could not replace rollout-0: rollout-0 did not join the run within 150 ms/);
    expect(workers.map((w) => w.terminated)).toEqual([true, true, true]);
    expect(joined).toHaveLength(1);
    p.close();
  });

  it('a worker that crashes or hangs while it starts is given up (told to end) and another takes the lane', async () => {
    // The pool never held the object of a worker that did not start: the hook must end it.
    for (const how of ['crash', 'hang'] as const) {
      const { p, joined, givenUp, errors } = pool(['rollout-0'], 0, true, {
        start: (n) => (n === 0 ? how : 'ok'),
        startMs: 150,
      });
      await p.start();
      expect(givenUp).toEqual([0]);
      expect(joined).toEqual([['rollout-0', 1]]);
      expect(errors).toEqual([]);
      p.close();
    }
  });

  it('a replacement still starting when the pool closes reports no error when it fails later', async () => {
    // Its failure came up to startMs after the Stop, and ended whatever run was current then.
    const { p, crashers, errors, workers } = pool(['rollout-0'], 0, true, {
      join: (w) => (w.n === 0 ? Promise.resolve() : new Promise(() => undefined)),
      startMs: 100,
    });
    await p.start();
    crashers.get('rollout-0')?.('boom');
    await vi.waitFor(() => expect(workers).toHaveLength(2));
    p.close();
    await new Promise((r) => setTimeout(r, 300));
    expect(errors).toEqual([]);
    expect(workers.every((w) => w.terminated)).toBe(true);
  });

  it('a spare that died while it waited is not given a lane', async () => {
    const { p, crashers, joined, workers, routes } = pool(['rollout-0'], 1);
    await p.start();
    await vi.waitFor(() => expect(workers).toHaveLength(2)); // the lane and a spare
    routes.get(workers[1] as FakeWorker)?.('spare died');
    crashers.get('rollout-0')?.('boom');
    await vi.waitFor(() => expect(joined).toHaveLength(2));
    expect(joined[1]).toEqual(['rollout-0', 2]); // a new worker, not the dead spare
    expect(workers[1]?.terminated).toBe(true);
    p.close();
  });

  it('closed while it starts, it leaves no heartbeat running', async () => {
    const gate: { release?: () => void } = {};
    const { p, workers } = pool(['rollout-0'], 0, true, {
      join: () => new Promise<void>((r) => (gate.release = r)),
    });
    const started = p.start();
    await vi.waitFor(() => expect(gate.release).toBeDefined());
    const intervals = vi.spyOn(globalThis, 'setInterval');
    p.close();
    gate.release?.();
    await started;
    expect(intervals).not.toHaveBeenCalled();
    expect(workers[0]?.terminated).toBe(true);
  });

  it('after close, nothing is spawned and every worker is terminated', async () => {
    const { p, workers, crashers, joined } = pool();
    await p.start();
    p.close();
    expect(workers.every((w) => w.terminated)).toBe(true);
    crashers.get('rollout-0')?.('late');
    await new Promise((r) => setTimeout(r, 10));
    expect(joined).toHaveLength(2);
  });
});
