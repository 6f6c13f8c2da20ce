import * as Comlink from 'comlink';
import { CustomEnv, type CustomEnvSpec } from '../../src/lib/env/custom';
import type { MlpSnapshot } from '../../src/lib/policy/mlp';
import { playCustomGroup, type AdoptedPolicy } from '../../src/lib/rollout/custom-rollout';
import { customGroup, type CustomTrajectory } from '../../src/lib/pipeline/custom-workload';
import { now } from '../../src/lib/pipeline/events';
import type { PlayedGroup, RolloutJob } from '../../src/lib/pipeline/types';
import { CUSTOM_BASELINE_EPISODES } from '../../src/lib/rl/custom-config';
import { randomReturn, snapshotReturn, type OnEpisode } from '../../src/lib/rl/custom-trainer';
import { Rng } from '../../src/lib/random';
import { QuickJSSession, SessionError } from '../../src/lib/sandbox/session';
import type { RolloutContext } from './context';

/** The open custom environment, its sampling stream and the policy it plays with. */
interface OpenEnv {
  session: QuickJSSession;
  env: CustomEnv;
  rng: Rng;
  policy: AdoptedPolicy | null;
  /** Jobs queued or playing (an abort of any other job is nothing to remember). */
  pending: Set<number>;
  /** Jobs aborted while queued or playing (the pipeline stopped or dropped them). */
  aborted: Set<number>;
  /** The environment holds one episode's state: jobs play one after another. */
  queue: Promise<unknown>;
}

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

/** A custom JS environment's rollouts: open it, adopt MLP versions, play and evaluate on it. */
export function customEnvHandlers(ctx: RolloutContext) {
  let open: OpenEnv | undefined;

  function requireCustomEnv(): OpenEnv {
    if (!open) throw new Error('no custom environment is open: call openCustomEnv() first');
    return open;
  }

  return {
    /**
     * Opens a custom JS environment in a long-lived sandboxed context, replacing the previous
     * one; returns its spec and the random-action baseline return. Errors in the user's code
     * come back as messages.
     */
    openCustomEnv(
      code: string,
      seed: number,
      onEpisode?: OnEpisode,
    ): Promise<{ spec: CustomEnvSpec; randomReturn: number }> {
      return customCall(async () => {
        open?.session.dispose();
        open = undefined;
        const session = new QuickJSSession(await ctx.quickjsModule(), code, { deadlineMs: 100 });
        try {
          const env = new CustomEnv(session);
          open = {
            session,
            env,
            rng: new Rng(seed),
            policy: null,
            pending: new Set(),
            aborted: new Set(),
            queue: Promise.resolve(),
          };
          return {
            spec: env.spec,
            randomReturn: randomReturn(env, CUSTOM_BASELINE_EPISODES, seed, onEpisode),
          };
        } catch (err) {
          session.dispose();
          throw err;
        }
      });
    },

    /** Adopts a published MLP version for the open custom environment (a rollout in progress takes it at its next yield). */
    loadCustomPolicy(snapshot: MlpSnapshot, version: number): void {
      const c = requireCustomEnv();
      if (!c.policy || version > c.policy.version) c.policy = { snapshot, version };
    },

    /**
     * Plays a pipeline job on the open custom environment: `job.samples` episodes with the newest
     * adopted version (at least `job.minVersion`), each step stamped with its version and
     * behaviour log-prob. Jobs queue: the environment holds one episode at a time.
     */
    playCustom(job: RolloutJob, yieldEvery: number): Promise<PlayedGroup<CustomTrajectory>> {
      const c = requireCustomEnv();
      c.pending.add(job.jobId);
      const run = c.queue.then(() =>
        customCall(async () => {
          const startedAt = now();
          const aborted = (): PlayedGroup<CustomTrajectory> => {
            c.aborted.delete(job.jobId);
            return {
              ...customGroup(job.jobId, { trajectories: [], interrupted: 0 }, startedAt),
              status: 'aborted',
            };
          };
          for (let waited = 0; !c.policy || c.policy.version < job.minVersion; waited += 5) {
            if (c.aborted.has(job.jobId)) return aborted();
            if (waited > 10_000)
              throw new Error(
                `the rollout worker did not receive policy version ${job.minVersion} within 10 s`,
              );
            await new Promise((r) => setTimeout(r, 5));
          }
          if (c.aborted.has(job.jobId)) return aborted(); // aborted while queued
          const played = await playCustomGroup(
            c.env,
            job.samples,
            () => c.policy as AdoptedPolicy,
            new Rng(job.seed),
            { yieldEvery, aborted: () => c.aborted.has(job.jobId) },
          );
          if (!played) return aborted();
          const group = customGroup(job.jobId, played, startedAt);
          const buffers = group.trajectories.flatMap((t) =>
            [t.obs, t.actions, t.rewards, t.logProbs, t.versions].map((a) => a.buffer),
          );
          return Comlink.transfer(group, buffers);
        }),
      );
      c.queue = run.catch(() => undefined);
      return run.finally(() => {
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
      const run = c.queue.then(() =>
        customCall(async () => {
          if (!c.policy) throw new Error('no policy adopted yet');
          return snapshotReturn(c.env, c.policy.snapshot, episodes, greedy, c.rng, onEpisode);
        }),
      );
      c.queue = run.catch(() => undefined);
      return run;
    },
  };
}
