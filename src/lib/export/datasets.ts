/**
 * Tasks as the RL engines read them (issue #42, shared/research/export.md): one JSONL row per task
 * for TRL, AReaL, slime and OpenRLHF (a text `prompt`, chat `messages`, the `label` and tests the
 * reward checks), and verl's Parquet schema (`data_source`, `prompt` as messages, `ability`,
 * `reward_model {style, ground_truth}`, `extra_info`).
 */
import { parquetWriteBuffer } from 'hyparquet-writer';
import type { SchemaElement } from 'hyparquet';
import { observationTokens, renderTokens } from '../env/tokenizer';
import { kindOf, type Example, type Task, type TaskKind } from '../env/suite';
import type { GeneratedTask } from '../env/families';

/** Which part of the suite a task belongs to. */
export type Split = 'train' | 'heldout' | 'generalisation';

/** A chat message; the policy's observation is the one `user` message. */
export interface Message {
  role: 'user' | 'assistant' | 'system';
  content: string;
}

/** One JSONL row: every column reaches TRL's reward function as a keyword argument. */
export interface TaskRow {
  id: string;
  kind: TaskKind;
  level: string;
  split: Split;
  /** The family's name and a program that solves the task, when it is a built-in task. */
  family: string | null;
  program: string | null;
  /** The observation as text, `<bos>` to `<sep>` (the exported tokenizer reads it). */
  prompt: string;
  /** The same as chat messages: the tokenizer's chat template renders them back into `prompt`. */
  messages: Message[];
  /** The hidden tests `<submit>` is scored on, as a JSON string (`[{"input":1,"output":3}]`). */
  label: string;
  /** Shown examples, the tool-use kind's `<run>` tests (empty for the examples kind), hidden tests. */
  examples: Example[];
  tests: Example[];
  hidden: Example[];
}

/** A row of verl's Parquet schema; `ground_truth` and the tests are JSON strings so every row has one schema. */
export interface VerlRow {
  data_source: string;
  prompt: Message[];
  ability: string;
  reward_model: { style: 'rule'; ground_truth: string };
  extra_info: {
    split: Split;
    index: number;
    id: string;
    kind: string;
    level: string;
    family: string;
    /** The shown examples and the run tests as JSON: what a `<run>` is run on. */
    examples: string;
    tests: string;
  };
}

/** The split of a built-in task (a task of a user's suite: `train`). */
export function splitOf(t: Task | GeneratedTask): Split {
  if ('generalisation' in t && t.generalisation) return 'generalisation';
  return 'heldOut' in t && t.heldOut ? 'heldout' : 'train';
}

/** The observation of `examples` without `<bos>` and `<sep>`: the user message's text. */
function observationText(examples: readonly Example[]): string {
  return renderTokens(observationTokens(examples).slice(1, -1));
}

/** A task as a JSONL row. */
export function taskRow(t: Task | GeneratedTask): TaskRow {
  const content = observationText(t.examples);
  const generated = 'family' in t ? t : null;
  return {
    id: t.id,
    kind: kindOf(t),
    level: t.level,
    split: splitOf(t),
    family: generated?.family ?? null,
    program: generated?.program ?? null,
    prompt: renderTokens(observationTokens(t.examples)),
    messages: [{ role: 'user', content }],
    label: JSON.stringify(t.hidden),
    examples: t.examples,
    tests: t.tests ?? [],
    hidden: t.hidden,
  };
}

/** Tasks as JSONL text, one row a line. */
export function tasksJsonl(tasks: readonly (Task | GeneratedTask)[]): string {
  return tasks.map((t) => `${JSON.stringify(taskRow(t))}\n`).join('');
}

/** A task as a verl row (`index`: its place in the file). */
export function verlRow(t: Task | GeneratedTask, index: number): VerlRow {
  const row = taskRow(t);
  return {
    data_source: `sandbox-rl-lab/${row.kind}`,
    prompt: row.messages,
    ability: 'code',
    reward_model: { style: 'rule', ground_truth: row.label },
    extra_info: {
      split: row.split,
      index,
      id: row.id,
      kind: row.kind,
      level: row.level,
      family: row.family ?? '',
      examples: JSON.stringify(row.examples),
      tests: JSON.stringify(row.tests),
    },
  };
}

const str = (name: string): SchemaElement => ({
  name,
  type: 'BYTE_ARRAY',
  converted_type: 'UTF8',
  repetition_type: 'REQUIRED',
});

/** The extra_info fields that are strings, in schema order. */
const EXTRA_STRINGS = ['split', 'id', 'kind', 'level', 'family', 'examples', 'tests'] as const;

/**
 * verl's schema as Parquet: `prompt` a list of {role, content} structs, `reward_model` and
 * `extra_info` structs, every field required (pyarrow reads them as `not null`).
 */
const VERL_SCHEMA: SchemaElement[] = [
  { name: 'root', num_children: 5 },
  str('data_source'),
  { name: 'prompt', repetition_type: 'REQUIRED', converted_type: 'LIST', num_children: 1 },
  { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
  { name: 'element', repetition_type: 'REQUIRED', num_children: 2 },
  str('role'),
  str('content'),
  str('ability'),
  { name: 'reward_model', repetition_type: 'REQUIRED', num_children: 2 },
  str('style'),
  str('ground_truth'),
  { name: 'extra_info', repetition_type: 'REQUIRED', num_children: 1 + EXTRA_STRINGS.length },
  { name: 'index', type: 'INT64', repetition_type: 'REQUIRED' },
  ...EXTRA_STRINGS.map(str),
];

/** Tasks as a verl Parquet file (one row group per 1 000 rows, snappy-compressed). */
export function verlParquet(tasks: readonly (Task | GeneratedTask)[]): Uint8Array {
  if (tasks.length === 0) throw new Error('no tasks to write');
  const rows = tasks.map(verlRow);
  const buffer = parquetWriteBuffer({
    schema: VERL_SCHEMA,
    columnData: [
      { name: 'data_source', data: rows.map((r) => r.data_source) },
      { name: 'prompt', data: rows.map((r) => r.prompt) },
      { name: 'ability', data: rows.map((r) => r.ability) },
      { name: 'reward_model', data: rows.map((r) => r.reward_model) },
      // INT64 columns take bigints.
      { name: 'extra_info', data: rows.map((r) => ({ ...r.extra_info, index: BigInt(r.extra_info.index) })) },
    ],
    kvMetadata: [{ key: 'source', value: 'sandbox-rl-lab' }],
  });
  return new Uint8Array(buffer);
}
