/**
 * The page's greedy play and forward pass, written beside an export so that `cluster/check_export.py`
 * can hold the exported model to them (DESIGN §14): greedy.jsonl (each held-out and generalisation
 * task played greedily, with the legal-token mask of every policy token) and logits.json (the
 * page's logits on a few token sequences).
 */
import * as tf from '@tensorflow/tfjs';
import type { EnvConfig } from '../env/config';
import { runEpisodes, type TokenAgent } from '../env/evaluate';
import type { Episode } from '../env/episode';
import { kindOf, type Task, type TaskKind } from '../env/suite';
import { renderTokens } from '../env/tokenizer';
import type { ModelArgs } from '../policy/config';
import { forward, type Weights } from '../policy/model';
import type { Sandbox } from '../sandbox/types';
import { splitOf, type Split } from './datasets';

/** One task played greedily, as a row of greedy.jsonl. */
export interface GreedyRow {
  task_id: string;
  kind: TaskKind;
  level: string;
  split: Split;
  /** The first observation's length: `input_ids[:prompt_length]` is the prompt. */
  prompt_length: number;
  /** The whole episode: observation, the policy's tokens, the run reports. */
  input_ids: number[];
  /** 1 where the policy wrote the token. */
  loss_mask: number[];
  /** For each policy token, in order: the ids the grammar allowed there (the argmax ran over them). */
  legal: number[][];
  /** Each turn's program and how it ended (`run` or `submit`), in order. */
  programs: string[];
  actions: ('run' | 'submit')[];
  solved: boolean;
  reward: number;
}

/** What the page's forward pass gave on some token sequences (logits.json). */
export interface LogitsFile {
  backend: string;
  policy: string;
  model: ModelArgs;
  sequences: { ids: number[]; text: string }[];
  /** Per sequence, [T][V]. */
  logits: number[][][];
}

/** Tasks in batches of this many episodes, as the page's evaluator plays them. */
const BATCH = 32;

/**
 * `tasks` played by `agent` (the page's greedy `CachedPolicyAgent`) with the evaluator's
 * `runEpisodes`, recording the legal-token mask before each policy token.
 */
export async function greedyRows(
  tasks: readonly Task[],
  agent: TokenAgent,
  sandbox: Sandbox,
  config?: EnvConfig,
): Promise<GreedyRow[]> {
  const out: GreedyRow[] = [];
  for (let i = 0; i < tasks.length; i += BATCH) {
    const legal = new Map<Episode, number[][]>();
    const record = (ep: Episode) => {
      const list = legal.get(ep) ?? [];
      list.push(ep.legalTokens());
      legal.set(ep, list);
    };
    const chunk = tasks.slice(i, i + BATCH);
    const episodes = await runEpisodes(chunk, agent, sandbox, config, record);
    episodes.forEach((ep, j) => out.push(greedyRow(ep, chunk[j] as Task, legal.get(ep) ?? [])));
  }
  return out;
}

function greedyRow(ep: Episode, task: Task, legal: number[][]): GreedyRow {
  // Turns the environment played (an opening) are not the policy's.
  const turns = ep.turns.filter((t, k) => !(task.opening && k === 0 && t.auto));
  return {
    task_id: task.id,
    kind: kindOf(task),
    level: task.level,
    split: splitOf(task),
    prompt_length: ep.promptLength,
    input_ids: [...ep.tokens],
    loss_mask: [...ep.owned],
    legal,
    programs: turns.map((t) => t.program),
    actions: turns.map((t) => t.action),
    solved: ep.solved,
    reward: ep.parts.total,
  };
}

/** Rows as JSONL text. */
export const greedyJsonl = (rows: readonly GreedyRow[]): string =>
  rows.map((r) => `${JSON.stringify(r)}\n`).join('');

/** The page's logits on each sequence, one forward pass each ([T][V] per sequence). */
export async function pageLogits(
  params: Weights,
  args: ModelArgs,
  sequences: readonly number[][],
): Promise<number[][][]> {
  const out: number[][][] = [];
  for (const seq of sequences) {
    if (seq.length === 0 || seq.length > args.contextLength)
      throw new Error(`a sequence of ${seq.length} tokens does not fit a context of ${args.contextLength}`);
    const tokens = tf.tensor2d([seq], [1, seq.length], 'int32');
    const { logits, values } = forward(params, args, tokens);
    out.push(((await logits.array()) as number[][][])[0] as number[][]);
    tf.dispose([tokens, logits, values]);
  }
  return out;
}

/** The `count` longest distinct greedy episodes: the sequences logits.json checks the page's export on. */
export function logitSequences(rows: readonly GreedyRow[], count: number): number[][] {
  const seen = new Set<string>();
  const out: number[][] = [];
  for (const r of [...rows].sort((a, b) => b.input_ids.length - a.input_ids.length)) {
    const key = r.input_ids.join(',');
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(r.input_ids);
    if (out.length === count) break;
  }
  return out;
}

/** logits.json's content for `sequences`, with their text as the exported tokenizer reads it. */
export async function logitsFile(
  params: Weights,
  args: ModelArgs,
  sequences: readonly number[][],
  policy: string,
): Promise<LogitsFile> {
  return {
    backend: tf.getBackend(),
    policy,
    model: args,
    sequences: sequences.map((ids) => ({ ids: [...ids], text: renderTokens(ids) })),
    logits: await pageLogits(params, args, sequences),
  };
}
