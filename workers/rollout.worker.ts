/// <reference lib="webworker" />
import * as Comlink from 'comlink';
import * as tf from '@tensorflow/tfjs';
import RELEASE_SYNC from '@jitl/quickjs-wasmfile-release-sync';
import wasmLocation from '@jitl/quickjs-wasmfile-release-sync/wasm?url';
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSWASMModule } from 'quickjs-emscripten-core';
import { CustomEnv, type CustomEnvSpec } from '../src/lib/env/custom';
import { programCode } from '../src/lib/env/episode';
import {
  evaluateAgents,
  runEpisodes,
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
import {
  collectCustomBatch,
  randomReturn,
  snapshotReturn,
  type CustomBatch,
} from '../src/lib/rl/custom-trainer';
import { Rng } from '../src/lib/rl/random';
import { TrajectoryRecorder, type Trajectory } from '../src/lib/rl/trajectory';
import { CachedSandbox } from '../src/lib/sandbox/cache';
import { QuickJSSandbox } from '../src/lib/sandbox/quickjs';
import { QuickJSSession, SessionError } from '../src/lib/sandbox/session';
import { initBackend } from './tfjs-backends';

/** How the page starts a rollout worker. */
export interface RolloutInit {
  /** Backends to try for inference, best first (default: wasm → webgl → cpu; see README). */
  backends?: BackendName[];
  model: ModelArgs;
  /** Seed of the untrained policy's weights and of sampling. */
  seed: number;
}

/** The agents an evaluation can include (issue 4 baselines, plus the trained policy when loaded). */
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

/** One test of a task, run with the user's program (the task editor's "try"). */
export interface TryRow {
  set: 'example' | 'hidden';
  input: number;
  expected: number;
  got: string;
  pass: boolean;
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
/** Version of the weights episodes are collected with (−1: the untrained initial weights). */
let version = -1;
/** The agent that collects training episodes: KV-cached, its sampling stream kept across versions. */
let collector: CachedPolicyAgent | undefined;

/** One batch of training episodes to collect. */
export interface CollectRequest {
  tasks: Task[];
  /** Episodes per task (a group, for GRPO and RLOO). */
  samples: number;
  config?: EnvConfig;
  seed: number;
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
let customEnv: { session: QuickJSSession; env: CustomEnv; rng: Rng; policy: MlpSnapshot | null } | undefined;

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
    const report = await selectBackend(opts.backends ?? DEFAULT_ROLLOUT_BACKENDS, initBackend);
    if (untrained) tf.dispose([...untrained.values()]);
    untrained = initParams(opts.model, opts.seed);
    modelArgs = opts.model;
    await getSandbox();
    const parameters = [...untrained.values()].reduce((n, v) => n + v.size, 0);
    return { ...report, parameters };
  },

  /**
   * Adopts published weights as the `policy` agent and the policy that collects episodes. A
   * LoRA version (adapters only) is merged into the last full version this worker adopted.
   */
  loadPolicy(checkpoint: Checkpoint, v: number): void {
    const previous = trained;
    if (checkpoint.lora) {
      if (!base) throw new Error('a LoRA version arrived before any full version to merge it into');
      const adapters = adaptersFromCheckpoint(checkpoint);
      trained = mergedWeights(base, adapters, checkpoint.lora);
      tf.dispose([...adapters.values()]);
    } else {
      if (base) tf.dispose([...base.values()]);
      base = paramsFromCheckpoint(checkpoint);
      trained = base;
    }
    if (previous && previous !== base) tf.dispose([...previous.values()]);
    modelArgs = checkpoint.model;
    version = v;
    // Adopting a version rebuilds the cache from the current context at the next token.
    collector?.setParams(trained);
  },

  /**
   * Plays `samples` episodes of each task with the current policy (sampled), recording
   * behaviour log-probs and versions: the training data of one batch.
   */
  async collect(req: CollectRequest): Promise<Trajectory[]> {
    const params = trained ?? untrained;
    if (!params || !modelArgs) throw new Error('rollout worker not initialised: call init() first');
    collector ??= new CachedPolicyAgent('policy', params, modelArgs, { ...DEFAULT_SAMPLER, seed: req.seed });
    const recorder = new TrajectoryRecorder(version);
    const queue = req.tasks.flatMap((t) => Array.from({ length: req.samples }, () => t));
    const episodes = await runEpisodes(queue, collector, await getSandbox(), req.config, recorder.onToken);
    return episodes.map((ep) => recorder.trajectory(ep, ep.task.id));
  },

  /** The evaluation table (issue 4 §6): every requested agent on every task. */
  async evaluate(req: EvalRequest, onProgress?: (p: EvalProgress) => void): Promise<EvalRow[]> {
    if (!untrained || !modelArgs) throw new Error('rollout worker not initialised: call init() first');
    const args = modelArgs;
    const sb = await getSandbox();
    const made: CachedPolicyAgent[] = [];
    const agent = (name: string, params: Weights, greedy: boolean) => {
      const a = new CachedPolicyAgent(name, params, args, { ...DEFAULT_SAMPLER, greedy, seed: req.seed });
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

  /** Runs `(x) => (program)` on a task's examples and hidden tests (the task editor's "try"). */
  async tryProgram(task: Task, program: string): Promise<TryRow[]> {
    const sb = await getSandbox();
    const tests = [
      ...task.examples.map((e) => ({ ...e, set: 'example' as const })),
      ...task.hidden.map((e) => ({ ...e, set: 'hidden' as const })),
    ];
    const r = await sb.run({ code: programCode(program), inputs: tests.map((t) => t.input) });
    return tests.map((t, i) => {
      const y = r.outputs?.[i];
      const got = r.ok ? JSON.stringify(y) : `${r.error?.kind ?? 'error'}: ${r.error?.message ?? ''}`;
      return { set: t.set, input: t.input, expected: t.output, got, pass: r.ok && y === t.output };
    });
  },

  /**
   * Opens a custom JS environment (issue 4 §7) in a long-lived sandboxed context, replacing
   * the previous one; returns its spec and the random-action baseline return. Errors in the
   * user's code come back as messages.
   */
  openCustomEnv(code: string, seed: number): Promise<{ spec: CustomEnvSpec; randomReturn: number }> {
    return customCall(async () => {
      customEnv?.session.dispose();
      customEnv = undefined;
      const session = new QuickJSSession(await quickjsModule(), code, { deadlineMs: 100 });
      try {
        const env = new CustomEnv(session);
        customEnv = { session, env, rng: new Rng(seed), policy: null };
        return { spec: env.spec, randomReturn: randomReturn(env, 20, seed) };
      } catch (err) {
        session.dispose();
        throw err;
      }
    });
  },

  /** Adopts a published MLP policy for the open custom environment. */
  loadCustomPolicy(snapshot: MlpSnapshot, v: number): void {
    requireCustomEnv().policy = snapshot;
    version = v;
  },

  /** Plays `episodes` episodes of the open custom environment with the adopted policy (sampled). */
  collectCustom(episodes: number, gamma: number): Promise<CustomBatch> {
    return customCall(async () => {
      const c = requireCustomEnv();
      if (!c.policy) throw new Error('no policy adopted yet');
      const batch = collectCustomBatch(c.env, c.policy, episodes, gamma, c.rng);
      return Comlink.transfer(batch, [batch.obs.buffer, batch.actions.buffer, batch.returns.buffer]);
    });
  },

  /** Mean return of the adopted policy (greedy or sampled) on the open custom environment. */
  customReturn(episodes: number, greedy: boolean): Promise<number> {
    return customCall(async () => {
      const c = requireCustomEnv();
      if (!c.policy) throw new Error('no policy adopted yet');
      return snapshotReturn(c.env, c.policy, episodes, greedy, c.rng);
    });
  },
};

export type RolloutApi = typeof api;

Comlink.expose(api);
