/// <reference lib="webworker" />
import { errorMessage } from '../src/lib/errors';
import * as Comlink from 'comlink';
import * as tf from '@tensorflow/tfjs';
import RELEASE_SYNC from '@jitl/quickjs-wasmfile-release-sync';
import wasmLocation from '@jitl/quickjs-wasmfile-release-sync/wasm?url';
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSWASMModule } from 'quickjs-emscripten-core';
import { CustomEnv, type CustomEnvSpec } from '../src/lib/env/custom';
import { tryProgram, type TryResult } from '../src/lib/env/try-program';
import {
  evaluateAgents,
  RandomAgent,
  type AgentSpec,
  type EvalProgress,
  type EvalRow,
  type EvalTask,
} from '../src/lib/env/evaluate';
import type { EnvConfig } from '../src/lib/env/config';
import type { Task } from '../src/lib/env/suite';
import { selectBackend, type BackendName, type BackendReport } from '../src/lib/policy/backend';
import type { ModelArgs } from '../src/lib/policy/config';
import { initParams, type Params, type Weights } from '../src/lib/policy/model';
import { CachedPolicyAgent, DEFAULT_SAMPLER } from '../src/lib/policy/sampler';
import { adaptersFromCheckpoint, paramsFromCheckpoint, type Checkpoint } from '../src/lib/policy/weights';
import { mergedWeights } from '../src/lib/policy/lora';
import type { MlpSnapshot } from '../src/lib/policy/mlp';
import { randomReturn, snapshotReturn, type OnEpisode } from '../src/lib/rl/custom-trainer';
import { CUSTOM_BASELINE_EPISODES } from '../src/lib/rl/custom-config';
import { alive, useBeacon } from '../src/lib/pipeline/beacon';
import { Rng } from '../src/lib/rl/random';
import { CachedSandbox } from '../src/lib/sandbox/cache';
import { QuickJSSandbox } from '../src/lib/sandbox/quickjs';
import { QuickJSSession, SessionError } from '../src/lib/sandbox/session';
import { now, type Lane, type TimelineEvent } from '../src/lib/pipeline/events';
import { EventBatcher, isVersionAnnounce, PARAMS_CHANNEL } from '../src/lib/pipeline/params-channel';
import { emptyEngineStats, RolloutEngine, type EngineStats } from '../src/lib/pipeline/rollout-engine';
import type { PlayedGroup, RolloutJob } from '../src/lib/pipeline/types';
import { playCustomGroup, type AdoptedPolicy } from '../src/lib/pipeline/custom-rollout';
import { customGroup, type CustomTrajectory } from '../src/lib/pipeline/custom-workload';
import type { CacheStats } from '../src/lib/sandbox/cache';
import { LabDbConnection, type LabDB } from '../src/lib/storage/db';
import { withEviction } from '../src/lib/storage/quota';
import { putTrajectories } from '../src/lib/storage/trajectories-store';
import { latestFullVersion, latestVersion } from '../src/lib/storage/weights-store';
import { initBackend } from './tfjs-backends';

/** How the page starts a rollout worker. */
export interface RolloutInit {
  /** Backends to try for inference, best first (default: wasm → webgl → cpu; DESIGN §2). */
  backends?: BackendName[];
  model: ModelArgs;
  /** Seed of the untrained policy's weights and of sampling. */
  seed: number;
  /** The progress counter this worker bumps as it works (`beacon.ts`), where memory is shared. */
  beacon?: SharedArrayBuffer;
}

/** The agents an evaluation can include (the baselines of DESIGN §3, plus the trained policy when loaded). */
export type AgentName = 'random' | 'untrained' | 'bruteforce' | 'policy';

export interface EvalRequest {
  tasks: EvalTask[];
  agents: AgentName[];
  /** Sampled episodes per task for token agents (0: greedy play only). */
  samples: number;
  /** Cap of the brute-force search, in sandbox runs per task. */
  bruteMaxRuns?: number;
  config?: EnvConfig;
  seed: number;
}

export const DEFAULT_ROLLOUT_BACKENDS: BackendName[] = ['wasm', 'webgl', 'cpu'];

let module: Promise<QuickJSWASMModule> | undefined;
let sandbox: CachedSandbox | undefined;
let untrained: Params | undefined;
/** The last full weights adopted (a LoRA run's base). */
let base: Params | undefined;
/** The weights the policy runs with: `base` itself, or base merged with a version's adapters. */
let trained: Weights | undefined;
let modelArgs: ModelArgs | undefined;
/** The model args of the untrained policy (`init`'s); `modelArgs` follows the loaded policy's. */
let untrainedArgs: ModelArgs | undefined;

/** How the pipeline starts this worker's part of a run. */
export interface EngineRunInit {
  runId: string;
  /** Timeline lane of this worker (`rollout-N`). */
  lane: Lane;
  /** Episodes decoded together at most: slots × group size. */
  rows: number;
  /** Adopt a new version after this many decode steps even mid-turn (0: turn boundaries only). */
  interruptEveryTokens: number;
  /** Sampling temperature (1: the policy's own distribution). */
  temperature: number;
  seed: number;
  /** Read a version from the store when its announce has not arrived after this long, ms. */
  fetchAfterMs: number;
}

/** Bumps the progress counter while the event loop turns (set once the page gives a counter). */
let beaconTimer: ReturnType<typeof setInterval> | undefined;

/** What the worker reports with each heartbeat. */
export interface RolloutStats extends EngineStats {
  cache: CacheStats;
  /** The sandbox that runs this worker's programs. */
  sandbox: string;
  /** Epoch ms of the reply. */
  at: number;
}

/** The pipeline run this worker plays for: its engine, announce channel and the base of LoRA versions. */
let run:
  | {
      runId: string;
      lane: Lane;
      engine: RolloutEngine;
      channel: BroadcastChannel;
      base: Params | null;
      /** The base being read from the store: versions arriving meanwhile wait for the same one. */
      baseLoading: Promise<Params> | null;
    }
  | undefined;
/** This worker's connection (closed for a newer page in another tab; its next use then says so). */
const db = new LabDbConnection();
const events = new EventBatcher();

function database(): Promise<LabDB> {
  return db.get();
}

function requireRun(): NonNullable<typeof run> {
  if (!run) throw new Error('no pipeline run in this worker: call startRun() first');
  return run;
}

/** The full version a run's LoRA version `v` was trained on, as parameters. */
async function loadBase(runId: string, v: number): Promise<Params> {
  const full = await latestFullVersion(await database(), runId, v);
  if (!full) throw new Error(`run ${runId} has no full version to merge LoRA version ${v} into`);
  return paramsFromCheckpoint(full.checkpoint);
}

/** Offers a published version to the engine: full weights, or LoRA adapters merged into the run's base. */
async function offerCheckpoint(checkpoint: Checkpoint, v: number, publishedAt: number): Promise<void> {
  const r = requireRun();
  if (v <= r.engine.latest) return;
  let weights: Weights;
  if (checkpoint.lora) {
    // A store read and an announce can both get here first: they share one read (one base).
    if (!r.base) {
      const loading = (r.baseLoading ??= loadBase(r.runId, v).catch((err: unknown) => {
        r.baseLoading = null; // the next version tries again
        throw err;
      }));
      const base = await loading;
      if (run !== r) {
        // The worker left the run meanwhile (its base was freed with it): free this one too, once.
        if (r.baseLoading === loading) {
          r.baseLoading = null;
          tf.dispose([...base.values()]);
        }
        return;
      }
      r.base ??= base;
    }
    const adapters = adaptersFromCheckpoint(checkpoint);
    weights = mergedWeights(r.base, adapters, checkpoint.lora);
    tf.dispose([...adapters.values()]);
  } else {
    const params = paramsFromCheckpoint(checkpoint);
    r.base = params;
    weights = params;
  }
  r.engine.offer(v, weights, publishedAt, checkpoint.model);
}

/** Adopts the newest stored version of the run when it is at least `min` (a late announce, a new worker). */
async function adoptFromStore(min: number): Promise<void> {
  const r = requireRun();
  const record = await latestVersion(await database(), r.runId);
  if (!record || record.version < min || record.version <= r.engine.latest) return;
  await offerCheckpoint(record.checkpoint, record.version, now());
  events.mark({ lane: r.lane, kind: 'load', version: record.version, meta: { from: 'store' } });
}

function quickjsModule(): Promise<QuickJSWASMModule> {
  module ??= newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmLocation }));
  return module;
}

async function getSandbox(): Promise<CachedSandbox> {
  sandbox ??= new CachedSandbox(new QuickJSSandbox(await quickjsModule()));
  return sandbox;
}

/** The open custom environment, its sampling stream and the policy it plays with. */
let customEnv:
  | {
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
  | undefined;

function requireCustomEnv(): NonNullable<typeof customEnv> {
  if (!customEnv) throw new Error('no custom environment is open: call openCustomEnv() first');
  return customEnv;
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

const api = {
  /** Selects the inference backend and builds the untrained policy. */
  async init(opts: RolloutInit): Promise<BackendReport & { parameters: number }> {
    if (opts.beacon && !beaconTimer) {
      useBeacon(opts.beacon);
      // Idle or between jobs, the event loop turns: bump the counter then too.
      beaconTimer = setInterval(alive, 50);
    }
    const report = await selectBackend(opts.backends ?? DEFAULT_ROLLOUT_BACKENDS, initBackend);
    if (untrained) tf.dispose([...untrained.values()]);
    untrained = initParams(opts.model, opts.seed);
    modelArgs = opts.model;
    untrainedArgs = opts.model;
    await getSandbox();
    const parameters = [...untrained.values()].reduce((n, v) => n + v.size, 0);
    return { ...report, parameters };
  },

  /**
   * Loads published weights as the `policy` agent of evaluations (the run's evaluator, the
   * tasks bench). A LoRA version (adapters only) is merged into `base` when given (its run's full
   * version), else into the last full version loaded.
   */
  loadPolicy(checkpoint: Checkpoint, _v: number, baseCheckpoint?: Checkpoint): void {
    const previous = trained;
    if (baseCheckpoint && checkpoint.lora) {
      if (baseCheckpoint.lora) throw new Error('the base of a LoRA version must be a full version');
      const fresh = paramsFromCheckpoint(baseCheckpoint);
      if (base && base !== previous) tf.dispose([...base.values()]);
      base = fresh;
    }
    if (checkpoint.lora) {
      if (!base) throw new Error('a LoRA version arrived before any full version to merge it into');
      const adapters = adaptersFromCheckpoint(checkpoint);
      trained = mergedWeights(base, adapters, checkpoint.lora);
      tf.dispose([...adapters.values()]);
    } else {
      if (base && base !== previous) tf.dispose([...base.values()]);
      base = paramsFromCheckpoint(checkpoint);
      trained = base;
    }
    if (previous && previous !== base) tf.dispose([...previous.values()]);
    modelArgs = checkpoint.model;
  },

  /** The evaluation table (DESIGN §3): every requested agent on every task. */
  async evaluate(req: EvalRequest, onProgress?: (p: EvalProgress) => void): Promise<EvalRow[]> {
    if (!untrained || !modelArgs || !untrainedArgs)
      throw new Error('rollout worker not initialised: call init() first');
    // A loaded policy may have other args (a run stored by another build) than the untrained one.
    const [trainedArgs, freshArgs] = [modelArgs, untrainedArgs];
    const argsOf = (name: string) => (name === 'untrained' ? freshArgs : trainedArgs);
    const sb = await getSandbox();
    const made: CachedPolicyAgent[] = [];
    const agent = (name: string, params: Weights, greedy: boolean) => {
      const a = new CachedPolicyAgent(name, params, argsOf(name), {
        ...DEFAULT_SAMPLER,
        greedy,
        seed: req.seed,
      });
      made.push(a);
      return a;
    };
    const policy = (name: string, params: Weights): AgentSpec => ({
      name,
      kind: 'tokens',
      greedy: agent(name, params, true),
      sampled: agent(name, params, false),
    });
    const agents: AgentSpec[] = [];
    for (const name of req.agents) {
      if (name === 'random') agents.push({ name, kind: 'tokens', sampled: new RandomAgent(req.seed) });
      if (name === 'bruteforce') agents.push({ name, kind: 'bruteforce', maxRuns: req.bruteMaxRuns });
      if (name === 'untrained') agents.push(policy(name, untrained));
      if (name === 'policy') {
        if (!trained)
          throw new Error('no trained policy is loaded: train a run first, or leave "policy" out');
        agents.push(policy(name, trained));
      }
    }
    try {
      return await evaluateAgents(req.tasks, sb, agents, {
        config: req.config,
        samples: req.samples,
        onProgress,
      });
    } finally {
      for (const a of made) a.dispose(); // their KV caches
    }
  },

  /**
   * Joins a pipeline run: an engine over this worker's policy replica and sandbox, listening
   * for announced versions, starting from the newest stored one (a replacement or a resume).
   */
  async startRun(init: EngineRunInit): Promise<{ version: number }> {
    if (!modelArgs) throw new Error('rollout worker not initialised: call init() first');
    api.stopRun();
    const sb = await getSandbox();
    const lane = init.lane;
    const engine = new RolloutEngine(sb, {
      args: modelArgs,
      rows: init.rows,
      interruptEveryTokens: init.interruptEveryTokens,
      temperature: init.temperature,
      seed: init.seed,
      lane,
      fetchAfterMs: init.fetchAfterMs,
      emit: (e) => events.push(e),
      persist: async (job, trajectories) => {
        const d = await database();
        const createdAt = Date.now();
        const records = trajectories.map((trajectory, i) => ({
          runId: job.runId,
          seq: job.seqBase + i,
          jobId: job.jobId,
          consumed: 0 as const,
          createdAt,
          trajectory,
        }));
        await withEviction(
          d,
          () => putTrajectories(d, records),
          (e) =>
            events.mark({ lane, kind: 'evict', version: engine.version, meta: { ...e, reason: 'quota' } }),
        );
      },
      fetch: (min) => adoptFromStore(min),
      release: (w) => {
        if (w !== run?.base) tf.dispose([...w.values()]);
      },
    });
    const channel = new BroadcastChannel(PARAMS_CHANNEL);
    run = { runId: init.runId, lane, engine, channel, base: null, baseLoading: null };
    channel.onmessage = (ev: MessageEvent<unknown>) => {
      const d = ev.data;
      if (!isVersionAnnounce(d) || d.runId !== run?.runId) return;
      offerCheckpoint(d.checkpoint, d.version, d.publishedAt).catch((err: unknown) =>
        events.mark({
          lane,
          kind: 'error',
          version: d.version,
          meta: { message: errorMessage(err) },
        }),
      );
    };
    await adoptFromStore(0);
    return { version: engine.version };
  },

  /** Plays a job of the run (resolves once its trajectories are stored). */
  play(job: RolloutJob): Promise<PlayedGroup> {
    return requireRun().engine.play(job);
  },

  /** Drops a job (preemption). */
  abort(jobId: number): void {
    run?.engine.abort(jobId);
  },

  /** The heartbeat: engine counters and the result cache's hit rate. */
  async stats(): Promise<RolloutStats> {
    const sb = await getSandbox();
    const e = run?.engine.stats ?? emptyEngineStats();
    return { ...e, cache: sb.cache.stats, sandbox: sb.kind, at: now() };
  },

  /** Leaves the run: running jobs end as aborted, the channel closes. */
  stopRun(): void {
    if (!run) return;
    run.channel.close();
    run.engine.dispose();
    if (run.base) tf.dispose([...run.base.values()]);
    run = undefined;
    events.flush();
  },

  /**
   * Fault injection for tests (`?debug`): `crash` throws an uncaught error and closes the
   * worker, `hang` blocks its thread forever, `exit` closes it silently.
   */
  debugFault(kind: 'crash' | 'hang' | 'exit'): void {
    if (kind === 'crash') {
      setTimeout(() => {
        setTimeout(() => self.close(), 0);
        throw new Error('injected crash (debug fault)');
      }, 0);
    } else if (kind === 'hang') {
      setTimeout(() => {
        for (;;) {
          /* a hung worker: the heartbeat stops */
        }
      }, 0);
    } else {
      self.close();
    }
  },

  /** Registers the callback that receives timeline events in batches (pass it through `Comlink.proxy`). */
  setEventSink(callback: (batch: TimelineEvent[]) => void): void {
    events.sink = callback;
  },

  /** Runs `(x) => (program)` on a task's examples and hidden tests (the task editor's "try"). */
  async tryProgram(task: Task, program: string): Promise<TryResult> {
    return tryProgram(await getSandbox(), task, program);
  },

  /**
   * Opens a custom JS environment (DESIGN §3) in a long-lived sandboxed context, replacing
   * the previous one; returns its spec and the random-action baseline return. Errors in the
   * user's code come back as messages.
   */
  openCustomEnv(
    code: string,
    seed: number,
    onEpisode?: OnEpisode,
  ): Promise<{ spec: CustomEnvSpec; randomReturn: number }> {
    return customCall(async () => {
      customEnv?.session.dispose();
      customEnv = undefined;
      const session = new QuickJSSession(await quickjsModule(), code, { deadlineMs: 100 });
      try {
        const env = new CustomEnv(session);
        customEnv = {
          session,
          env,
          rng: new Rng(seed),
          policy: null,
          pending: new Set(),
          aborted: new Set(),
          queue: Promise.resolve(),
        };
        return { spec: env.spec, randomReturn: randomReturn(env, CUSTOM_BASELINE_EPISODES, seed, onEpisode) };
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
    if (customEnv?.pending.has(jobId)) customEnv.aborted.add(jobId);
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

export type RolloutApi = typeof api;

Comlink.expose(api);
