import { errorMessage } from '../errors';
import { Episode } from '../env/episode';
import type { ModelArgs } from '../policy/config';
import type { Weights } from '../policy/model';
import { CachedPolicyAgent, DEFAULT_SAMPLER } from '../policy/sampler';
import { TrajectoryRecorder } from '../rl/trajectory';
import type { Sandbox } from '../sandbox/types';
import { alive } from '../pipeline/beacon';
import { now, type TimelineEvent } from '../pipeline/events';
import {
  emptyEngineStats,
  type ActiveJob,
  type EngineOptions,
  type EngineStats,
  type WaitingJob,
} from './rollout-engine-types';
import { abortedGroup, doneGroup, episodeStreams, relabelJob } from './rollout-group';
import { waitForVersion } from './version-wait';
import type { KeptPrefix, PlayedGroup, RolloutJob } from '../pipeline/types';
import { Rng } from '../random';
import { yieldToEventLoop } from './yield';

export { emptyEngineStats, type EngineOptions, type EngineStats };

/**
 * The rollout side of the pipeline inside one worker: every episode of every job the worker
 * holds decodes in one KV-cached batch; jobs join and leave as they start and finish. New
 * weights are offered at any time and adopted at the next turn boundary of any episode (or after
 * `interruptEveryTokens` steps, or at once when idle): episodes in flight keep going on the new
 * weights after a prefill, and every token is stamped with the version that wrote it.
 */
export class RolloutEngine {
  /** Version of the weights in use (−1: none yet). */
  version = -1;
  /** Version whose weights those are: older than `version` under a fixed lag (tokens are stamped with it). */
  played = -1;
  private weights: Weights | null = null;
  private pending: {
    version: number;
    played: number;
    weights: Weights;
    publishedAt: number;
    args: ModelArgs;
  } | null = null;
  private agent: CachedPolicyAgent | null = null;
  private readonly recorder = new TrajectoryRecorder(-1);
  private readonly jobs = new Map<number, ActiveJob>();
  private readonly waiting = new Set<WaitingJob>();
  /** Preempted jobs whose played prefix is being replayed: they hold no rows yet. */
  private readonly resuming = new Set<{ jobId: number; aborted: boolean; keep?: boolean }>();
  /** Jobs done playing whose group is being relabelled, not yet stored. */
  private readonly finishing = new Map<number, ActiveJob>();
  private disposed = false;
  private looping = false;
  private stepsSinceOffer = 0;
  /** Open `generate` segment: since when, with which version, tokens written. */
  private segment: { t0: number; version: number; tokens: number; sandboxMs: number } | null = null;
  readonly stats: EngineStats = emptyEngineStats();

  constructor(
    private readonly sandbox: Sandbox,
    private readonly opts: EngineOptions,
  ) {}

  /** Newest version the engine holds or has been offered. */
  get latest(): number {
    return Math.max(this.version, this.pending?.version ?? -1);
  }

  /**
   * New weights (announced or loaded from the store), with the model args of their checkpoint.
   * Older than what the engine has: released at once. Idle: adopted at once. Otherwise adopted
   * at the next turn boundary. `played`: the version the weights are (an older one's under a
   * fixed lag, `RunConfig.playLag`), which stamps the tokens; jobs wait on `version`.
   */
  offer(
    version: number,
    weights: Weights,
    publishedAt: number,
    args: ModelArgs = this.opts.args,
    played = version,
  ): void {
    // A fetch still in flight when the engine was disposed must not build a new agent.
    if (this.disposed || version <= this.latest) {
      this.opts.release(weights);
      return;
    }
    if (this.pending) this.opts.release(this.pending.weights);
    this.pending = { version, played, weights, publishedAt, args };
    this.stepsSinceOffer = 0;
    if (!this.looping) this.adopt([]);
    for (const w of this.waiting) if (w.min <= this.latest) w.wake();
  }

  /** Plays a job's group; resolves once its trajectories are stored (or with `aborted`). */
  async play(job: RolloutJob): Promise<PlayedGroup> {
    if (job.samples < 1 || job.samples > this.opts.rows)
      throw new Error(`a job of ${job.samples} episodes does not fit ${this.opts.rows} rows`);
    const queued = now();
    if (this.disposed) return abortedGroup(job.jobId, this.version, queued, this.version);
    if (this.latest < job.minVersion) {
      const w = await waitForVersion(this.waiting, job, this.opts);
      // Checked after the await, with nothing awaited between here and `jobs.set` below (but a
      // replay, which checks again): an abort at any point of the wait is seen, no rows taken.
      this.waiting.delete(w);
      if (w.aborted)
        return abortedGroup(job.jobId, this.version, queued, this.version, w.keep ? job.resume : undefined);
    }
    if (!this.looping && this.pending) this.adopt([]);
    if (this.activeEpisodes() + job.samples > this.opts.rows)
      throw new Error(`worker is full: ${this.activeEpisodes()} episodes running, ${this.opts.rows} rows`);
    const t0 = now();
    if (t0 - queued > 1)
      this.emit({
        kind: 'wait',
        t0: queued,
        t1: t0,
        version: this.version,
        meta: { job: job.jobId, for: job.minVersion },
      });
    let episodes = Array.from({ length: job.samples }, () => new Episode(job.task, job.env));
    let streams = episodeStreams(job);
    const resumed = new Set<Episode>();
    if (job.resume) {
      const replay: { jobId: number; aborted: boolean; keep?: boolean } = {
        jobId: job.jobId,
        aborted: false,
      };
      this.resuming.add(replay);
      try {
        await this.replay(job.resume, episodes);
        job.resume.episodes.forEach((p, i) => {
          const ep = episodes[i];
          if (ep && p.tokens.length > 0) resumed.add(ep);
        });
        streams = job.resume.streams.map((state) => new Rng(state));
      } catch (err) {
        // A prefix that does not replay (it should always): the job starts over, and says so.
        for (const ep of episodes) this.recorder.forget(ep);
        episodes = Array.from({ length: job.samples }, () => new Episode(job.task, job.env));
        resumed.clear();
        this.errorMark(job.jobId, `could not resume its played prefix: ${errorMessage(err)}`);
      } finally {
        this.resuming.delete(replay);
      }
      if (replay.aborted) {
        for (const ep of episodes) this.recorder.forget(ep);
        return abortedGroup(
          job.jobId,
          this.version,
          queued,
          this.version,
          replay.keep ? job.resume : undefined,
        );
      }
      // Rows taken meanwhile (the controller never sends more jobs than slots): checked again.
      if (this.activeEpisodes() + job.samples > this.opts.rows)
        throw new Error(`worker is full: ${this.activeEpisodes()} episodes running, ${this.opts.rows} rows`);
    }
    return new Promise<PlayedGroup>((resolve, reject) => {
      this.jobs.set(job.jobId, {
        job,
        episodes,
        streams,
        startedAt: t0,
        startVersion: this.pending?.version ?? this.version,
        // A resumed episode goes on under the current weights: the cache is rebuilt (a prefill).
        interrupted: resumed,
        ...(resumed.size > 0 && job.resume ? { kept: job.resume.episodes.map((p) => p.tokens.length) } : {}),
        calls: [],
        cost: { sandboxMs: 0, tokens: 0 },
        aborted: false,
        resolve,
        reject,
      });
      if (!this.looping) void this.loop();
    });
  }

  /**
   * Rebuilds a preempted job's episodes from `kept`: each policy token stepped in again with the
   * stamp it was first written with (the sandbox answers as it did: the environment is
   * deterministic). Throws when a token is no longer legal.
   */
  private async replay(kept: KeptPrefix, episodes: readonly Episode[]): Promise<void> {
    if (kept.episodes.length !== episodes.length || kept.streams.length !== episodes.length)
      throw new Error(`${kept.episodes.length} kept episodes for a job of ${episodes.length}`);
    for (const [i, ep] of episodes.entries()) {
      const p = kept.episodes[i];
      if (!p) continue;
      for (const [k, token] of p.tokens.entries()) {
        this.recorder.restore(ep, p.logProbs[k] ?? 0, p.versions[k] ?? -1, p.values[k] ?? 0);
        await ep.step(token, this.sandbox);
      }
    }
  }

  /**
   * Drops a job, playing, resuming or still waiting for its version: its `play` resolves with
   * status `aborted`, nothing is stored. With `keep` (a preemption) it resolves `preempted` with
   * what its episodes had played, to resume from; a job already done playing then finishes.
   */
  abort(jobId: number, keep = false): void {
    for (const w of this.waiting)
      if (w.jobId === jobId) {
        w.aborted = true;
        w.keep = keep;
        w.wake(); // its `play` returns the aborted group
      }
    for (const r of this.resuming)
      if (r.jobId === jobId) {
        r.aborted = true;
        r.keep = keep;
      }
    const finishing = this.finishing.get(jobId);
    // Its finish resolves it as aborted, unstored; a preempted one is as good as done: it stays.
    if (finishing && !keep) finishing.aborted = true;
    const a = this.jobs.get(jobId);
    if (!a) return;
    a.aborted = true;
    this.jobs.delete(jobId);
    const kept: KeptPrefix | undefined = keep
      ? { episodes: a.episodes.map((ep) => this.recorder.prefix(ep)), streams: a.streams.map((r) => r.state) }
      : undefined;
    for (const ep of a.episodes) this.recorder.forget(ep);
    a.resolve({
      ...abortedGroup(jobId, a.startVersion, a.startedAt, this.version, kept),
      interrupted: a.interrupted.size,
    });
  }

  /** Aborts every job, the waiting ones and those being relabelled included (the run stopped). */
  abortAll(): void {
    const ids = [
      ...this.jobs.keys(),
      ...[...this.waiting].map((w) => w.jobId),
      ...[...this.resuming].map((r) => r.jobId),
      ...this.finishing.keys(),
    ];
    for (const id of new Set(ids)) this.abort(id);
  }

  /** Aborts every job and frees the weights; a later `play` resolves as aborted at once. */
  dispose(): void {
    this.disposed = true;
    this.abortAll();
    this.agent?.dispose();
    this.agent = null;
    if (this.pending) this.opts.release(this.pending.weights);
    if (this.weights) this.opts.release(this.weights);
    this.pending = null;
    this.weights = null;
  }

  private activeEpisodes(): number {
    let n = 0;
    for (const a of this.jobs.values()) n += a.episodes.filter((e) => !e.done).length;
    return n;
  }

  private emit(e: Omit<TimelineEvent, 'lane'>): void {
    this.opts.emit?.({ lane: this.opts.lane, ...e });
  }

  /** An `error` mark on the worker's lane, for a job's trouble that does not fail it. */
  private errorMark(jobId: number, message: string): void {
    const t = now();
    this.emit({ kind: 'error', t0: t, t1: t, version: this.version, meta: { job: jobId, message } });
  }

  /** Switches to the pending weights; episodes in `live` that already started are interrupted. */
  private adopt(live: readonly Episode[]): void {
    const p = this.pending;
    if (!p) return;
    this.pending = null;
    const t = now();
    const from = this.version;
    this.closeSegment(t);
    const previous = this.weights;
    this.weights = p.weights;
    this.version = p.version;
    this.played = p.played;
    this.stats.version = p.version;
    this.recorder.version = p.played;
    if (!this.agent) {
      this.agent = new CachedPolicyAgent('policy', p.weights, p.args, {
        ...DEFAULT_SAMPLER,
        rows: this.opts.rows,
        temperature: this.opts.temperature,
        seed: this.opts.seed,
      });
    } else {
      this.agent.setParams(p.weights, p.args); // the cache is rebuilt from the current context (prefill)
    }
    if (previous) this.opts.release(previous);
    this.stats.adoptions += 1;
    this.emit({
      kind: 'adopt',
      t0: t,
      t1: t,
      version: p.version,
      meta: {
        from,
        latencyMs: Number((t - p.publishedAt).toFixed(2)),
        ...(p.played !== p.version ? { plays: p.played } : {}),
      },
    });
    const inFlight = live.filter((e) => !e.done && e.tokens.length > e.promptLength);
    if (inFlight.length > 0) {
      for (const a of this.jobs.values())
        for (const e of a.episodes) if (inFlight.includes(e)) a.interrupted.add(e);
      this.stats.interrupts += inFlight.length;
      this.emit({
        kind: 'interrupt',
        t0: t,
        t1: t,
        version: p.version,
        meta: { episodes: inFlight.length, from },
      });
    }
  }

  private closeSegment(t: number): void {
    const s = this.segment;
    if (!s) return;
    this.segment = null;
    if (s.tokens > 0)
      this.emit({
        kind: 'generate',
        t0: s.t0,
        t1: t,
        version: s.version,
        meta: { tokens: s.tokens, sandboxMs: Number(s.sandboxMs.toFixed(1)) },
      });
  }

  private async loop(): Promise<void> {
    this.looping = true;
    try {
      for (;;) {
        // Finished groups are stored and returned without holding up the others' decoding (a
        // resumed job may arrive with every episode already played).
        for (const a of [...this.jobs.values()]) if (a.episodes.every((e) => e.done)) void this.finish(a);
        const jobs = [...this.jobs.values()];
        const live = jobs.flatMap((a) => a.episodes.filter((e) => !e.done));
        const streams = jobs.flatMap((a) => a.streams.filter((_, i) => !a.episodes[i]?.done));
        this.stats.activeEpisodes = live.length;
        this.stats.activeJobs = this.jobs.size;
        if (live.length === 0) break;
        const atBoundary = live.some((e) => e.programText === '');
        const every = this.opts.interruptEveryTokens;
        if (this.pending && (atBoundary || (every > 0 && this.stepsSinceOffer >= every))) this.adopt(live);
        const agent = this.agent;
        if (!agent) throw new Error('no weights to play with');
        this.segment ??= { t0: now(), version: this.played, tokens: 0, sandboxMs: 0 };
        const prefillsBefore = agent.prefills;
        const tokens = await agent.choose(live, streams);
        alive(); // a decode step (or a prefill) done: the pool sees progress without a message
        this.stats.prefills += agent.prefills - prefillsBefore;
        this.stepsSinceOffer += 1;
        const segment = this.segment;
        for (const [i, ep] of live.entries()) {
          const token = tokens[i];
          const owner = this.owner(ep);
          if (token === undefined || ep.done || !owner) continue; // aborted meanwhile
          this.recorder.onToken(ep, token, agent.lastLogProbs[i] ?? 0, agent.lastValues[i] ?? 0);
          const s0 = performance.now();
          const turns = ep.turns.length;
          await ep.step(token, this.sandbox);
          // The token ended a turn: a sandbox call, stamped on the events' clock (`now()`).
          if (ep.turns.length > turns) owner.calls.push(performance.timeOrigin + s0);
          alive();
          const ms = performance.now() - s0;
          segment.sandboxMs += ms;
          owner.cost.sandboxMs += ms;
          owner.cost.tokens += 1;
          segment.tokens += 1;
          this.stats.tokens += 1;
        }
        // Let announces, aborts and heartbeats in between decode steps.
        await yieldToEventLoop();
      }
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      for (const a of [...this.jobs.values()]) {
        this.jobs.delete(a.job.jobId);
        for (const ep of a.episodes) this.recorder.forget(ep);
        a.reject(e);
      }
    } finally {
      this.looping = false;
      this.closeSegment(now());
      this.stats.activeEpisodes = this.activeEpisodes();
      this.stats.activeJobs = this.jobs.size;
      if (this.pending) this.adopt([]);
    }
    // A job that arrived while the last step was finishing starts a new loop.
    if (this.jobs.size > 0 && !this.looping) void this.loop();
  }

  private owner(ep: Episode): ActiveJob | undefined {
    for (const a of this.jobs.values()) if (a.episodes.includes(ep)) return a;
    return undefined;
  }

  private async finish(a: ActiveJob): Promise<void> {
    this.jobs.delete(a.job.jobId); // synchronously, before the next decode step
    // Until its trajectories go to the store, an abort still drops the job (`abort` marks it).
    this.finishing.set(a.job.jobId, a);
    try {
      await this.finishJob(a);
    } finally {
      this.finishing.delete(a.job.jobId);
    }
  }

  private async finishJob(a: ActiveJob): Promise<void> {
    const trajectories = a.episodes.map((ep) => {
      const tr = this.recorder.trajectory(ep, a.job.task.id);
      this.recorder.forget(ep);
      return tr;
    });
    const relabelled = await relabelJob(
      a.job,
      a.episodes.map((ep) => ep.turns.map((turn) => turn.program)),
      this.sandbox,
      (err) => this.errorMark(a.job.jobId, `relabelling failed: ${errorMessage(err)}`),
    );
    if (a.aborted) {
      // Aborted while it was relabelled: nothing is stored under seqs the controller dropped.
      a.resolve({
        ...abortedGroup(a.job.jobId, a.startVersion, a.startedAt, this.version),
        interrupted: a.interrupted.size,
      });
      return;
    }
    this.finishing.delete(a.job.jobId); // from here on it is stored: an abort comes too late
    const t = now();
    const group = doneGroup(a.job, trajectories, relabelled, {
      cost: { sandboxMs: Number(a.cost.sandboxMs.toFixed(2)), tokens: a.cost.tokens },
      episodeSandboxMs: a.episodes.map((ep) => Number(ep.sandboxMs.toFixed(2))),
      interrupted: a.interrupted.size,
      startedAt: a.startedAt,
      endedAt: t,
      current: this.played,
      turns: a.episodes.map((ep) => ep.turns),
    });
    this.emit({
      kind: 'episode',
      t0: a.startedAt,
      t1: t,
      version: group.oldestVersion,
      meta: {
        job: a.job.jobId,
        task: a.job.task.id,
        episodes: trajectories.length,
        solved: trajectories.filter((x) => x.solved).length,
        newest: group.newestVersion,
        ...(a.kept ? { kept: a.kept.join(' ') } : {}),
      },
      calls: a.calls.map((c) => Math.round(c - a.startedAt)).sort((x, y) => x - y),
    });
    try {
      await this.opts.persist(a.job, trajectories);
      a.resolve(group);
    } catch (err) {
      a.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }
}
