import * as tf from '@tensorflow/tfjs';
import type { EnvConfig } from '../../src/lib/env/config';
import type { TurnRecord } from '../../src/lib/env/episode';
import {
  evaluateAgents,
  runEpisodes,
  RandomAgent,
  type AgentSpec,
  type EvalProgress,
  type EvalRow,
  type EvalTask,
} from '../../src/lib/env/evaluate';
import {
  greedyRows,
  logitSequences,
  logitsFile,
  type GreedyRow,
  type LogitsFile,
} from '../../src/lib/export/greedy';
import { mergedWeights } from '../../src/lib/policy/lora';
import type { Params, Weights } from '../../src/lib/policy/model';
import { CachedPolicyAgent, DEFAULT_SAMPLER } from '../../src/lib/policy/sampler';
import { adaptersFromCheckpoint, paramsFromCheckpoint, type Checkpoint } from '../../src/lib/policy/weights';
import type { Task } from '../../src/lib/env/suite';
import { TrajectoryRecorder, type Trajectory } from '../../src/lib/rl/trajectory';
import type { RolloutContext } from './context';

/** The agents an evaluation can include (the baselines, plus the trained policy when loaded). */
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

/** One greedy episode of the loaded policy on one task (`playGreedy`). */
export interface GreedyPlayRequest {
  task: Task;
  /** The loaded version's number, stamped on every token the policy writes. */
  version: number;
  config?: EnvConfig;
  seed: number;
}

/** What a greedy episode came to: its trajectory (no legal masks) and each turn's answer. */
export interface GreedyPlayed {
  trajectory: Trajectory;
  turns: TurnRecord[];
}

/** An export's greedy play of the loaded policy (`export/greedy.ts`). */
export interface GreedyExportRequest {
  tasks: EvalTask[];
  config?: EnvConfig;
  /** How many of the longest episodes logits.json holds. */
  sequences: number;
  /** What logits.json says the policy is. */
  policy: string;
}

/** The trained policy an evaluation plays: the last full weights loaded, and with LoRA the merge. */
class LoadedPolicy {
  /** The last full weights adopted (a LoRA run's base). */
  base: Params | undefined;
  /** The weights the policy runs with: `base` itself, or base merged with a version's adapters. */
  trained: Weights | undefined;
}

/** Evaluations: every requested agent (baselines, the loaded policy) on every task. */
export function evaluateHandlers(ctx: RolloutContext) {
  const p = new LoadedPolicy();

  return {
    /**
     * Loads published weights as the `policy` agent of evaluations (the run's evaluator, the
     * tasks bench). A LoRA version (adapters only) is merged into `base` when given (its run's full
     * version), else into the last full version loaded.
     */
    loadPolicy(checkpoint: Checkpoint, _v: number, baseCheckpoint?: Checkpoint): void {
      const previous = p.trained;
      if (baseCheckpoint && checkpoint.lora) {
        if (baseCheckpoint.lora) throw new Error('the base of a LoRA version must be a full version');
        const fresh = paramsFromCheckpoint(baseCheckpoint);
        if (p.base && p.base !== previous) tf.dispose([...p.base.values()]);
        p.base = fresh;
      }
      if (checkpoint.lora) {
        if (!p.base) throw new Error('a LoRA version arrived before any full version to merge it into');
        const adapters = adaptersFromCheckpoint(checkpoint);
        p.trained = mergedWeights(p.base, adapters, checkpoint.lora);
        tf.dispose([...adapters.values()]);
      } else {
        if (p.base && p.base !== previous) tf.dispose([...p.base.values()]);
        p.base = paramsFromCheckpoint(checkpoint);
        p.trained = p.base;
      }
      if (previous && previous !== p.base) tf.dispose([...previous.values()]);
      ctx.modelArgs = checkpoint.model;
    },

    /** The evaluation table: every requested agent on every task. */
    async evaluate(req: EvalRequest, onProgress?: (p: EvalProgress) => void): Promise<EvalRow[]> {
      const { untrained, modelArgs, untrainedArgs } = ctx;
      if (!untrained || !modelArgs || !untrainedArgs)
        throw new Error('rollout worker not initialised: call init() first');
      // A loaded policy may have other args (a run stored by another build) than the untrained one.
      const argsOf = (name: string) => (name === 'untrained' ? untrainedArgs : modelArgs);
      const sb = await ctx.getSandbox();
      const trained = p.trained;
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
     * Plays the loaded policy greedily on one task, one episode (behaviour at a checkpoint): the
     * episode is returned, never stored.
     */
    async playGreedy(req: GreedyPlayRequest): Promise<GreedyPlayed> {
      const { modelArgs } = ctx;
      const trained = p.trained;
      if (!trained || !modelArgs) throw new Error('no version is loaded: call loadPolicy() first');
      const sb = await ctx.getSandbox();
      const agent = new CachedPolicyAgent('policy', trained, modelArgs, {
        ...DEFAULT_SAMPLER,
        greedy: true,
        seed: req.seed,
      });
      const recorder = new TrajectoryRecorder(req.version);
      try {
        const [episode] = await runEpisodes([req.task], agent, sb, req.config, recorder.onToken);
        if (!episode) throw new Error('the episode did not run');
        // The masks are training data only: the feed does not read them, so they do not cross.
        const trajectory = { ...recorder.trajectory(episode, 'greedy'), legal: new Uint8Array(0) };
        return { trajectory, turns: episode.turns.map((t) => ({ ...t })) };
      } finally {
        agent.dispose();
      }
    },

    /**
     * The loaded policy's greedy episodes on `tasks` as the evaluator plays them (a greedy
     * `CachedPolicyAgent`, sampler seed 1), with each policy token's legal ids, and its logits on
     * the longest of them: greedy.jsonl and logits.json of an export.
     */
    async greedyExport(req: GreedyExportRequest): Promise<{ rows: GreedyRow[]; logits: LogitsFile }> {
      const { modelArgs } = ctx;
      const trained = p.trained;
      if (!trained || !modelArgs) throw new Error('no trained policy is loaded');
      const agent = new CachedPolicyAgent('policy', trained, modelArgs, {
        ...DEFAULT_SAMPLER,
        greedy: true,
        seed: 1,
      });
      try {
        const rows = await greedyRows(req.tasks, agent, await ctx.getSandbox(), req.config);
        const logits = await logitsFile(trained, modelArgs, logitSequences(rows, req.sequences), req.policy);
        return { rows, logits };
      } finally {
        agent.dispose();
      }
    },
  };
}
