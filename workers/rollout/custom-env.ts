import * as Comlink from 'comlink';
import { errorMessage } from '../../src/lib/errors';
import { CustomEnv, type CustomEnvSpec } from '../../src/lib/custom/env';
import { snapshotFromCheckpoint, type MlpCheckpoint } from '../../src/lib/policy/mlp';
import { playCustomGroup, type AdoptedPolicy } from '../../src/lib/custom/rollout';
import { emptyEngineStats } from '../../src/lib/rollout/rollout-engine-types';
import { customGroup, type CustomTrajectory } from '../../src/lib/custom/workload';
import { now, type Lane } from '../../src/lib/pipeline/events';
import { isMlpAnnounce, isVersionAnnounce, PARAMS_CHANNEL } from '../../src/lib/pipeline/params-channel';
import type { PlayedGroup, RolloutJob } from '../../src/lib/pipeline/types';
import { CUSTOM_BASELINE_EPISODES } from '../../src/lib/custom/config';
import { randomReturn, snapshotReturn, type OnEpisode } from '../../src/lib/custom/trainer';
import { Rng } from '../../src/lib/random';
import { QuickJSSession, SessionError } from '../../src/lib/custom/quickjs-session';
import { isMlpRecord, newestRecord } from '../../src/lib/storage/weights-store';
import type { RolloutContext } from './context';

/** How the pipeline starts this worker's part of a custom environment's training. */
export interface CustomRunJoin {
  runId: string;
  /** Timeline lane of this worker (`rollout-N`). */
  lane: Lane;
  /** The environment's code. */
  code: string;
  /** Seed of the environment's sampling stream. */
  seed: number;
  /** Read a version from the store when its announce has not arrived after this long, ms. */
  fetchAfterMs: number;
}

/** The open custom environment, its sampling stream and the policy it plays with. */
interface OpenEnv {
  session: QuickJSSession;
  env: CustomEnv;
  seed: number;
  rng: Rng;
  policy: AdoptedPolicy | null;
  /** Jobs queued or playing (an abort of any other job is nothing to remember). */
  pending: Set<number>;
  /** Jobs aborted while queued or playing (the pipeline stopped or dropped them). */
  aborted: Set<number>;
  /** The environment holds one episode's state: jobs play one after another. */
  queue: Promise<unknown>;
  /** Called when a version is adopted (a job waiting for it goes on). */
  adopted: (() => void)[];
}

/** The training this worker plays for: the channel its versions are announced on. */
interface CustomPlay {
  runId: string;
  lane: Lane;
  channel: BroadcastChannel;
  fetchAfterMs: number;
  interrupts: number;
}

/** How long a job waits for the version it needs before the worker gives up, ms. */
const VERSION_WAIT_MS = 10_000;

/** Runs `f`, turning a failure inside the environment's code into a message that says so. */
async function customCall<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (err) {
    if (err instanceof SessionError)
      throw new Error(`the environment's code failed (${err.kind}): ${err.message}`, { cause: err });
    throw err;
  }
}

/**
 * A custom JS environment's rollouts: open it, measure baselines on it, and play a training's
 * jobs with the versions its trainer announces (or the store holds).
 */
export function customEnvHandlers(ctx: RolloutContext) {
  let open: OpenEnv | undefined;
  let run: CustomPlay | undefined;

  function requireCustomEnv(): OpenEnv {
    if (!open) throw new Error('no custom environment is open: call openCustomEnv() first');
    return open;
  }

  /** Adopts `v` when newer than the policy held; wakes the jobs waiting for a version. */
  function adopt(c: OpenEnv, checkpoint: MlpCheckpoint, v: number): boolean {
    if (c.policy && v <= c.policy.version) return false;
    c.policy = { snapshot: snapshotFromCheckpoint(checkpoint), version: v };
    for (const wake of c.adopted.splice(0)) wake();
    return true;
  }

  /** Adopts the newest stored version of `runId` when newer than the one held; returns the version held. */
  async function adoptFromStore(c: OpenEnv, runId: string): Promise<number> {
    const record = await newestRecord(await ctx.database(), runId);
    if (record && !isMlpRecord(record))
      throw new Error(`run ${runId} is not a custom environment's training`);
    if (record && adopt(c, record.checkpoint, record.version) && run)
      ctx.events.mark({ lane: run.lane, kind: 'load', version: record.version, meta: { from: 'store' } });
    return c.policy?.version ?? -1;
  }

  /** Waits until the policy is at least `job.minVersion`, reading the store when no announce came. */
  async function versionFor(c: OpenEnv, job: RolloutJob): Promise<boolean> {
    const since = now();
    while (!c.policy || c.policy.version < job.minVersion) {
      if (c.aborted.has(job.jobId)) return false;
      if (now() - since > VERSION_WAIT_MS)
        throw new Error(`the rollout worker did not receive policy version ${job.minVersion} within 10 s`);
      const wait = run?.fetchAfterMs ?? 250;
      const arrived = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), wait);
        c.adopted.push(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
      if (!arrived && run) await adoptFromStore(c, run.runId);
    }
    return true;
  }

  /** Leaves the training this worker plays for and closes its environment. */
  function close(): void {
    run?.channel.close();
    run = undefined;
    ctx.customStats = undefined;
    open?.session.dispose();
    open = undefined;
  }

  const handlers = {
    /**
     * Opens a custom JS environment in a long-lived sandboxed context, replacing the previous
     * one (and leaving the training it played for); returns its spec. Errors in the user's code
     * come back as messages.
     */
    openCustomEnv(code: string, seed: number): Promise<{ spec: CustomEnvSpec }> {
      return customCall(async () => {
        close();
        const session = new QuickJSSession(await ctx.quickjsModule(), code, { deadlineMs: 100 });
        try {
          const env = new CustomEnv(session);
          open = {
            session,
            env,
            seed,
            rng: new Rng(seed),
            policy: null,
            pending: new Set(),
            aborted: new Set(),
            queue: Promise.resolve(),
            adopted: [],
          };
          return { spec: env.spec };
        } catch (err) {
          session.dispose();
          throw err;
        }
      });
    },

    /** Mean return of random actions on the open environment (the baseline every training reports). */
    customRandomReturn(onEpisode?: OnEpisode): Promise<number> {
      const c = requireCustomEnv();
      const measured = c.queue.then(() =>
        customCall(async () => randomReturn(c.env, CUSTOM_BASELINE_EPISODES, c.seed, onEpisode)),
      );
      c.queue = measured.catch(() => undefined);
      return measured;
    },

    /** Adopts the newest stored version of a custom training (to measure it); returns its version (−1: none). */
    adoptStoredCustom(runId: string): Promise<number> {
      return adoptFromStore(requireCustomEnv(), runId);
    },

    /**
     * Joins a custom environment's training: opens its environment, listens for the versions its
     * trainer announces, and adopts the newest stored one (a replacement, a resume).
     */
    async startCustom(init: CustomRunJoin): Promise<{ version: number; spec: CustomEnvSpec }> {
      const { spec } = await handlers.openCustomEnv(init.code, init.seed);
      const c = requireCustomEnv();
      const channel = new BroadcastChannel(PARAMS_CHANNEL);
      const joined: CustomPlay = { ...init, channel, interrupts: 0 };
      run = joined;
      channel.onmessage = (ev: MessageEvent<unknown>) => {
        const d = ev.data;
        if (!isVersionAnnounce(d) || d.runId !== init.runId || !isMlpAnnounce(d) || open !== c) return;
        try {
          if (adopt(c, d.checkpoint, d.version))
            ctx.events.push({
              lane: init.lane,
              kind: 'adopt',
              t0: d.publishedAt,
              t1: now(),
              version: d.version,
            });
        } catch (err) {
          ctx.events.mark({
            lane: init.lane,
            kind: 'error',
            version: d.version,
            meta: { message: errorMessage(err) },
          });
        }
      };
      ctx.customStats = () => ({
        ...emptyEngineStats(),
        version: c.policy?.version ?? -1,
        activeJobs: c.pending.size,
        interrupts: joined.interrupts,
      });
      return { version: await adoptFromStore(c, init.runId), spec };
    },

    /**
     * Plays a pipeline job on the open custom environment: `job.samples` episodes with the newest
     * adopted version (at least `job.minVersion`), each step stamped with its version and
     * behaviour log-prob. Jobs queue: the environment holds one episode at a time.
     */
    playCustom(job: RolloutJob, yieldEvery: number): Promise<PlayedGroup<CustomTrajectory>> {
      const c = requireCustomEnv();
      c.pending.add(job.jobId);
      const played = c.queue.then(() =>
        customCall(async () => {
          const startedAt = now();
          const aborted = (): PlayedGroup<CustomTrajectory> => {
            c.aborted.delete(job.jobId);
            return {
              ...customGroup(job.jobId, { trajectories: [], interrupted: 0 }, startedAt),
              status: 'aborted',
            };
          };
          if (!(await versionFor(c, job)) || c.aborted.has(job.jobId)) return aborted();
          const group = await playCustomGroup(
            c.env,
            job.samples,
            () => c.policy as AdoptedPolicy, // adopted above, never unset
            new Rng(job.seed),
            { yieldEvery, aborted: () => c.aborted.has(job.jobId) },
          );
          if (!group) return aborted();
          if (run) run.interrupts += group.interrupted;
          const out = customGroup(job.jobId, group, startedAt);
          const buffers = out.trajectories.flatMap((t) =>
            [t.obs, t.actions, t.rewards, t.logProbs, t.versions].map((a) => a.buffer),
          );
          return Comlink.transfer(out, buffers);
        }),
      );
      c.queue = played.catch(() => undefined);
      return played.finally(() => {
        c.pending.delete(job.jobId);
        c.aborted.delete(job.jobId); // an abort that came as it finished
      });
    },

    /** Drops a custom job, queued or playing: its `playCustom` resolves as aborted. */
    abortCustom(jobId: number): void {
      if (open?.pending.has(jobId)) open.aborted.add(jobId);
    },

    /** Mean return of the adopted policy (greedy or sampled) on the open custom environment, after the queued jobs. */
    customReturn(episodes: number, greedy: boolean, onEpisode?: OnEpisode): Promise<number> {
      const c = requireCustomEnv();
      const measured = c.queue.then(() =>
        customCall(async () => {
          if (!c.policy) throw new Error('no policy adopted yet');
          return snapshotReturn(c.env, c.policy.snapshot, episodes, greedy, c.rng, onEpisode);
        }),
      );
      c.queue = measured.catch(() => undefined);
      return measured;
    },

    /** Leaves the custom training and closes its environment. */
    stopCustom(): void {
      close();
    },
  };
  return handlers;
}
