import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_ENV_CONFIG } from '../env/config';
import { generateTasks } from '../env/families';
import { DEFAULT_MODEL_ARGS, type ModelArgs } from '../policy/config';
import { initParams, type Weights } from '../policy/model';
import type * as Hindsight from '../rl/hindsight';
import type { Trajectory } from '../rl/trajectory';
import type { QuickJSSandbox } from '../sandbox/quickjs';
import { createNodeQuickJS } from '../sandbox/quickjs-node';
import type { TimelineEvent } from '../pipeline/events';
import { RolloutEngine, type EngineOptions } from './rollout-engine';
import type { RolloutJob } from '../pipeline/types';
import { yieldToEventLoop } from './yield';

// Relabelling that fails for its next `failures` calls (a sandbox gone mid-way), real otherwise.
const relabel = vi.hoisted(() => ({ failures: 0, onCall: null as (() => void) | null }));
vi.mock('../rl/hindsight', async (importOriginal) => {
  const real = await importOriginal<typeof Hindsight>();
  return {
    ...real,
    relabelEpisode: (...a: Parameters<typeof real.relabelEpisode>) => {
      relabel.onCall?.();
      if (relabel.failures === 0) return real.relabelEpisode(...a);
      relabel.failures -= 1;
      return Promise.reject(new Error('sandbox gone'));
    },
  };
});

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** `p`'s value, or 'pending' when it has not settled within `ms`. */
const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, sleep(ms).then(() => 'pending' as const)]);

const args: ModelArgs = { ...DEFAULT_MODEL_ARGS, dModel: 16, nHeads: 2, dMlp: 32 };
const tasks = generateTasks(1).filter((t) => t.level === 'easy');

let sandbox: QuickJSSandbox;
beforeAll(async () => {
  await tf.setBackend('cpu');
  sandbox = await createNodeQuickJS();
});
afterAll(() => sandbox.dispose());

function job(
  jobId: number,
  minVersion = 0,
  samples = 3,
  relabelMaxAbs = 0,
  relabelMutations = 0,
): RolloutJob {
  const task = tasks[jobId % tasks.length];
  if (!task) throw new Error('no task');
  return {
    jobId,
    runId: 'r',
    task,
    samples,
    minVersion,
    seqBase: jobId * 10,
    seed: jobId,
    env: DEFAULT_ENV_CONFIG,
    relabelMaxAbs,
    relabelMutations,
    cls: 'normal',
    value: 0.25,
  };
}

function engine(over: Partial<EngineOptions> = {}) {
  const events: TimelineEvent[] = [];
  const stored: Trajectory[][] = [];
  const released: Weights[] = [];
  const fetched: number[] = [];
  const e = new RolloutEngine(sandbox, {
    args,
    rows: 8,
    interruptEveryTokens: 0,
    temperature: 1,
    seed: 1,
    lane: 'rollout-0',
    fetchAfterMs: 20,
    emit: (ev) => events.push(ev),
    persist: async (_j, t) => void stored.push(t),
    fetch: async (min) => void fetched.push(min),
    release: (w) => {
      released.push(w);
      tf.dispose([...w.values()]);
    },
    ...over,
  });
  return { e, events, stored, released, fetched };
}

describe('RolloutEngine', () => {
  it('plays a group with the offered version, stores it, then returns it with its versions', async () => {
    const { e, events, stored } = engine();
    e.offer(0, initParams(args, 1), 0);
    const g = await e.play(job(0));
    expect(g.status).toBe('done');
    expect(g.trajectories).toHaveLength(3);
    expect(g.seqs).toEqual([0, 1, 2]);
    expect(stored).toHaveLength(1);
    expect(g.oldestVersion).toBe(0);
    expect(g.newestVersion).toBe(0);
    for (const tr of g.trajectories) {
      tr.owned.forEach((o, i) => expect(tr.versions[i]).toBe(o ? 0 : -1));
    }
    // What the sandbox answered to each turn comes back beside each trajectory (the program feed).
    expect(g.turns?.map((turns) => turns.length)).toEqual(g.trajectories.map((tr) => tr.turns));
    expect(g.turns?.flat().every((t) => t.outputs !== undefined || t.error !== undefined)).toBe(true);
    const episode = events.find((ev) => ev.kind === 'episode');
    expect(episode).toBeDefined();
    // Its span marks every sandbox call of the group (one per turn), in order, within the span.
    const calls = episode?.calls ?? [];
    expect(calls.length).toBeGreaterThan(0);
    expect(calls).toHaveLength(g.trajectories.reduce((n, tr) => n + tr.turns, 0));
    expect(calls).toEqual([...calls].sort((a, b) => a - b));
    for (const c of calls) expect(c >= 0 && c <= (episode?.t1 ?? 0) - (episode?.t0 ?? 0) + 1).toBe(true);
    expect(events.some((ev) => ev.kind === 'generate' && ev.version === 0)).toBe(true);
    e.dispose();
  });

  it('under a fixed lag, holds the announced version for waiting jobs and stamps tokens with the version played', async () => {
    const { e, events } = engine();
    // Version 3 is out; the weights played are version 1's (a lag of 2).
    e.offer(3, initParams(args, 1), 0, args, 1);
    expect([e.version, e.played, e.latest]).toEqual([3, 1, 3]);
    const g = await e.play(job(0, 3));
    expect(g.status).toBe('done');
    expect([g.oldestVersion, g.newestVersion]).toEqual([1, 1]);
    for (const tr of g.trajectories) tr.owned.forEach((o, i) => expect(tr.versions[i]).toBe(o ? 1 : -1));
    const adopt = events.find((ev) => ev.kind === 'adopt');
    expect([adopt?.version, adopt?.meta?.plays]).toEqual([3, 1]);
    expect(events.filter((ev) => ev.kind === 'generate').every((ev) => ev.version === 1)).toBe(true);
    e.dispose();
  });

  it("samples a job's episodes the same whether it plays alone or joins another job's batch later", async () => {
    // In a worker the moment a job joins the decode batch depends on message timing: each
    // episode samples from its own stream (from the job's seed), so its tokens do not.
    const tokensOf = (g: { trajectories: readonly Trajectory[] }) =>
      g.trajectories.map((t) => `${t.tokens.join(' ')} | ${t.logProbs.join(' ')}`);
    const alone = engine();
    alone.e.offer(0, initParams(args, 1), 0);
    const solo = await alone.e.play(job(5, 0, 4));
    alone.e.dispose();
    const shared = engine({ seed: 9 }); // another worker's seed: the job's own seed decides
    shared.e.offer(0, initParams(args, 1), 0);
    const first = shared.e.play(job(4, 0, 4));
    for (let i = 0; i < 3; i++) await yieldToEventLoop(); // job 4 has decoded a few tokens alone
    const joined = await shared.e.play(job(5, 0, 4));
    await first;
    shared.e.dispose();
    expect(solo.status).toBe('done');
    expect(tokensOf(joined)).toEqual(tokensOf(solo));
    // Each episode has a stream of its own: the group's four programs are not one program four times.
    expect(new Set(tokensOf(solo)).size).toBeGreaterThan(1);
  });

  it('relabels the programs of a group when the job asks (hindsight), and not otherwise', async () => {
    const { e } = engine();
    e.offer(0, initParams(args, 1), 0);
    const plain = await e.play(job(2, 0, 4));
    expect(plain.relabelled).toEqual([]);
    const g = await e.play(job(3, 0, 4, 1e6));
    expect(g.relabelled.length).toBeGreaterThan(0);
    const written = new Set(g.trajectories.flatMap((t) => t.tokens));
    for (const r of g.relabelled) {
      expect(r.trajectory.solved).toBe(true);
      expect(r.trajectory.group).toBe('hindsight');
      // Its program is one the group wrote: every policy token of it appears in the group.
      r.trajectory.tokens.forEach((tok, i) => r.trajectory.owned[i] && expect(written.has(tok)).toBe(true));
    }
    e.dispose();
  });

  it('relabels one-token variants of the programs too when the job asks, the same for the same job seed', async () => {
    const programsOf = (rs: readonly Hindsight.Relabelled[]) =>
      rs.map((r) => r.trajectory.tokens.filter((_, i) => r.trajectory.owned[i]).join(' '));
    const play = async (mutations: number) => {
      const { e } = engine();
      e.offer(0, initParams(args, 1), 0);
      const g = await e.play(job(3, 0, 4, 1e6, mutations));
      e.dispose();
      return programsOf(g.relabelled);
    };
    const [plain, varied, again] = [await play(0), await play(4), await play(4)];
    expect(plain.length).toBeGreaterThan(0);
    // The same sampled programs (same job seed), and variants of them beside.
    for (const p of plain) expect(varied).toContain(p);
    expect(varied.length).toBeGreaterThan(plain.length);
    expect(again).toEqual(varied);
  });

  it('adopts a new version mid-episode without dropping it: later tokens carry the new version', async () => {
    const { e, events, released } = engine();
    const w0 = initParams(args, 1);
    e.offer(0, w0, 0);
    // Job 2: its sampling streams write episodes that last past the first turn boundary.
    const playing = e.play(job(2, 0, 4));
    // Let a few tokens be written, then publish version 1.
    while (e.stats.tokens < 3) await yieldToEventLoop(); // one decode step per turn of the loop
    e.offer(1, initParams(args, 2), performance.timeOrigin + performance.now());
    const g = await playing;
    expect(g.status).toBe('done');
    expect(g.oldestVersion).toBe(0);
    expect(g.newestVersion).toBe(1);
    expect(g.interrupted).toBeGreaterThan(0);
    expect(e.version).toBe(1);
    expect(released).toContain(w0);
    // Every episode still has its tokens in order: versions never go down along an episode.
    for (const tr of g.trajectories) {
      const vs = tr.versions.filter((v) => v >= 0);
      expect(vs.every((v, i) => i === 0 || v >= (vs[i - 1] ?? 0))).toBe(true);
    }
    const adopt = events.find((ev) => ev.kind === 'adopt' && ev.version === 1);
    expect(adopt?.meta?.from).toBe(0);
    expect(events.some((ev) => ev.kind === 'interrupt')).toBe(true);
    e.dispose();
  });

  it('plays weights published with other model args (a run stored by an older build) with those args', async () => {
    // Workers of a build with the copy head on by default, and a stored run without it.
    const { e } = engine({ args: { ...args, pointerDim: 4 } });
    e.offer(0, initParams(args, 1), 0, args);
    const g = await e.play(job(0));
    expect(g.status).toBe('done');
    expect(g.trajectories.every((t) => t.logProbs.every(Number.isFinite))).toBe(true);
    const copyArgs = { ...args, pointerDim: 4 };
    e.offer(1, initParams(copyArgs, 2), 0, copyArgs);
    const h = await e.play(job(1, 1));
    expect(h.status).toBe('done');
    expect(h.newestVersion).toBe(1);
    e.dispose();
  });

  it('waits for the version a job needs, and asks the store when the announce is late', async () => {
    const { e, fetched } = engine({
      fetch: async (min) => {
        fetched.push(min);
        e.offer(min, initParams(args, 3), 0);
      },
    });
    e.offer(0, initParams(args, 1), 0);
    const g = await e.play(job(2, 1));
    expect(fetched).toEqual([1]);
    expect(g.oldestVersion).toBe(1);
    e.dispose();
  });

  it('an aborted job resolves as aborted and stores nothing; the others go on', async () => {
    const { e, stored } = engine();
    e.offer(0, initParams(args, 1), 0);
    const a = e.play(job(3, 0, 2));
    const b = e.play(job(4, 0, 2));
    while (e.stats.tokens === 0) await yieldToEventLoop();
    e.abort(3);
    const [ga, gb] = await Promise.all([a, b]);
    expect(ga.status).toBe('aborted');
    expect(gb.status).toBe('done');
    expect(stored).toHaveLength(1);
    e.dispose();
  });

  it('a preempted job keeps its played prefix; resumed elsewhere under a newer version it goes on from it', async () => {
    const a = engine();
    a.e.offer(0, initParams(args, 1), 0);
    const first = a.e.play(job(5, 0, 2));
    while (a.e.stats.tokens < 6) await yieldToEventLoop();
    a.e.abort(5, true);
    const g = await first;
    expect(g.status).toBe('preempted');
    expect(a.stored).toHaveLength(0);
    const kept = g.kept;
    if (!kept) throw new Error('nothing kept');
    expect(kept.episodes).toHaveLength(2);
    expect(kept.streams).toHaveLength(2);
    expect(kept.episodes.reduce((n, p) => n + p.tokens.length, 0)).toBeGreaterThanOrEqual(6);
    for (const p of kept.episodes) expect(new Set(p.versions)).toEqual(new Set(p.tokens.length ? [0] : []));
    a.e.dispose();

    // Another worker, holding version 1, resumes it: the prefix is replayed, not sampled again.
    const b = engine();
    b.e.offer(1, initParams(args, 2), 0);
    const h = await b.e.play({ ...job(5, 1, 2), resume: kept });
    expect(h.status).toBe('done');
    expect(b.stored).toHaveLength(1);
    h.trajectories.forEach((tr, i) => {
      const p = kept.episodes[i];
      if (!p) throw new Error('no prefix');
      const own = tr.owned.flatMap((o, pos) => (o ? [pos] : []));
      const n = p.tokens.length;
      expect(own.slice(0, n).map((pos) => tr.tokens[pos])).toEqual(p.tokens);
      expect(own.slice(0, n).map((pos) => tr.versions[pos])).toEqual(p.versions);
      expect(own.slice(0, n).map((pos) => tr.logProbs[pos])).toEqual(p.logProbs);
      for (const pos of own.slice(n)) expect(tr.versions[pos]).toBe(1);
    });
    // Some episode went on past its prefix under the new version: the group spans both.
    expect(h.oldestVersion).toBe(0);
    expect(h.newestVersion).toBe(1);
    expect(h.interrupted).toBeGreaterThan(0);
    // Its span on the timeline says how many tokens each episode kept.
    const kept_ = kept.episodes.map((p) => p.tokens.length).join(' ');
    expect(b.events.find((ev) => ev.kind === 'episode')?.meta?.kept).toBe(kept_);
    b.e.dispose();
  });

  it('a job preempted with every episode already played resumes straight to its stored group', async () => {
    const a = engine();
    a.e.offer(0, initParams(args, 1), 0);
    const whole = await a.e.play(job(11, 0, 2));
    // Its episodes, whole, as a preemption just before it was stored would have kept them.
    const kept = {
      episodes: whole.trajectories.map((tr) => {
        const own = tr.owned.flatMap((o, pos) => (o ? [pos] : []));
        return {
          tokens: own.map((pos) => tr.tokens[pos] ?? 0),
          logProbs: own.map((pos) => tr.logProbs[pos] ?? 0),
          versions: own.map((pos) => tr.versions[pos] ?? -1),
          values: own.map((pos) => tr.values[pos] ?? 0),
        };
      }),
      streams: [1, 2],
    };
    a.e.dispose();
    const b = engine();
    b.e.offer(1, initParams(args, 2), 0);
    const again = await within(b.e.play({ ...job(11, 1, 2), resume: kept }), 2000);
    if (again === 'pending') throw new Error('the resumed job never finished');
    expect(again.status).toBe('done');
    expect(again.trajectories.map((tr) => tr.tokens)).toEqual(whole.trajectories.map((tr) => tr.tokens));
    expect(again.trajectories.map((tr) => tr.return)).toEqual(whole.trajectories.map((tr) => tr.return));
    b.e.dispose();
  });

  it('a preempted job still waiting for its version hands back what it was given to resume', async () => {
    const { e } = engine();
    e.offer(0, initParams(args, 1), 0);
    const kept = {
      episodes: [0, 1].map(() => ({ tokens: [], logProbs: [], versions: [], values: [] })),
      streams: [7, 8],
    };
    const waiting = e.play({ ...job(6, 3, 2), resume: kept });
    await sleep(30);
    e.abort(6, true);
    expect(await within(waiting, 100)).toMatchObject({ jobId: 6, status: 'preempted', kept });
    // Without a prefix there is nothing to keep: aborted.
    const plain = e.play(job(7, 3, 2));
    await sleep(30);
    e.abort(7, true);
    expect(await within(plain, 100)).toMatchObject({ jobId: 7, status: 'aborted' });
    e.dispose();
  });

  it('a job aborted while it waits for its version resolves as aborted at once, stores nothing and frees its rows', async () => {
    const storedJobs: number[] = [];
    const { e, fetched } = engine({ rows: 4, persist: async (j) => void storedJobs.push(j.jobId) });
    e.offer(0, initParams(args, 1), 0);
    const waiting = e.play(job(7, 1, 4)); // needs version 1, which has not come
    await sleep(30);
    e.abort(7); // preempted, or the run stopped
    const g = await within(waiting, 100);
    expect(g).toMatchObject({ jobId: 7, status: 'aborted', trajectories: [], seqs: [] });
    // It no longer asks the store for its version.
    const asked = fetched.length;
    await sleep(60);
    expect(fetched).toHaveLength(asked);
    // Version 1 arrives: the next job gets all 4 rows, and only its group is stored.
    e.offer(1, initParams(args, 2), 0);
    const h = await e.play(job(8, 1, 4));
    expect(h.status).toBe('done');
    expect(storedJobs).toEqual([8]);
    e.dispose();
  });

  it('dispose settles the jobs still waiting for their version, and ignores versions offered after', async () => {
    const { e, fetched, released } = engine();
    e.offer(0, initParams(args, 1), 0);
    const waiting = e.play(job(9, 5));
    await sleep(30);
    e.dispose();
    expect(await within(waiting, 100)).toMatchObject({ jobId: 9, status: 'aborted' });
    const asked = fetched.length;
    await sleep(60);
    expect(fetched).toHaveLength(asked);
    // A store fetch still in flight at dispose: its weights are released, not adopted.
    const late = initParams(args, 2);
    e.offer(5, late, 0);
    expect(released).toContain(late);
    expect(e.version).toBe(0);
    expect(await e.play(job(10, 0))).toMatchObject({ status: 'aborted' });
  });

  it('asks the store again while it waits: a lost announce and a failed fetch do not hang the job', async () => {
    let calls = 0;
    const { e } = engine({
      fetch: async (min) => {
        calls += 1;
        if (calls === 1) throw new Error('store busy');
        if (calls === 3) e.offer(min, initParams(args, 3), 0); // stored by now; never announced
      },
    });
    e.offer(0, initParams(args, 1), 0);
    const g = await within(e.play(job(2, 1)), 2000);
    expect(g).toMatchObject({ status: 'done', oldestVersion: 1 });
    expect(calls).toBe(3);
    e.dispose();
  });

  it('keeps a group whose relabelling fails, without the relabelled episodes', async () => {
    const { e, events, stored } = engine();
    e.offer(0, initParams(args, 1), 0);
    relabel.failures = 4; // every episode of the group
    const g = await e.play(job(3, 0, 4, 1e6));
    expect(relabel.failures).toBe(0);
    expect(g.status).toBe('done');
    expect(g.trajectories).toHaveLength(4);
    expect(g.relabelled).toEqual([]);
    expect(stored).toHaveLength(1);
    expect(events.some((ev) => ev.kind === 'error' && ev.meta?.job === 3)).toBe(true);
    e.dispose();
  });

  it('a job aborted while its finished group is relabelled resolves aborted, and nothing is stored', async () => {
    // It had left `jobs` when it finished playing: the abort was lost, and the group was stored
    // under seqs the controller had dropped.
    const { e, stored } = engine();
    e.offer(0, initParams(args, 1), 0);
    relabel.onCall = () => e.abort(6);
    try {
      const g = await e.play(job(6, 0, 2, 1e6));
      expect(g.status).toBe('aborted');
      expect(g.seqs).toEqual([]);
      expect(stored).toEqual([]);
    } finally {
      relabel.onCall = null;
    }
    e.dispose();
  });

  it('abortAll and dispose reach a job whose finished group is being relabelled', async () => {
    // They listed only the playing and the waiting jobs: a Stop left the relabelled group to be stored.
    for (const end of ['abortAll', 'dispose'] as const) {
      const { e, stored } = engine();
      e.offer(0, initParams(args, 1), 0);
      relabel.onCall = () => e[end]();
      try {
        const g = await e.play(job(7, 0, 2, 1e6));
        expect(g.status).toBe('aborted');
        expect(stored).toEqual([]);
      } finally {
        relabel.onCall = null;
      }
      e.dispose();
    }
  });

  it('refuses a job that does not fit its rows', async () => {
    const { e } = engine({ rows: 2 });
    e.offer(0, initParams(args, 1), 0);
    await expect(e.play(job(5, 0, 3))).rejects.toThrow(/does not fit/);
    e.dispose();
  });
});
