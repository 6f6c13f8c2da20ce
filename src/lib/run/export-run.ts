/**
 * A stored run leaving the page for a cluster, and a Hugging Face GPT-2 folder coming in as a
 * start point (issue "Graduate to a cluster"; DESIGN §14). Loaded lazily by the run view: the
 * zip, the Parquet writer and the GPT-2 mapping stay out of the page's first bundle.
 *
 * The export is one .zip whose root is the HF GPT-2 folder of the chosen version (`exportHfGpt2`:
 * what `cluster/train_trl.py` takes as its export folder), with tasks.jsonl and tasks.parquet (the run's tasks, each with its split), trajectories.jsonl (the
 * stored episodes), greedy.jsonl and logits.json (the version's greedy play of the held-out tasks
 * and its logits, when a player is given), run-config.json and a README. The import reads a folder's files or a .zip,
 * checks them with `importHfGpt2` and stores the policy as a run of its own with one version (0),
 * which "start from" then offers; a folder that does not fit is refused before anything is stored.
 */
import type { GeneratedTask } from '../env/families';
import { kindOf, RELABELLED_PREFIX, type Example, type Task, type TaskKind } from '../env/suite';
import { observationTokens } from '../env/tokenizer';
import { SEP, tokenId } from '../env/vocab';
import type { EnvConfig } from '../env/config';
import type { EvalTask } from '../env/evaluate';
import { generalisationOf, playEnvOf, runBuiltInTasks } from '../env/task-kinds';
import { heldOutOf } from '../pipeline/run-tasks';
import { wideTrainingTasks } from '../pipeline/training-tasks';
import { defaultRunConfig, runConfigFromJson, runConfigToJson, type RunConfig } from '../config/run-config';
import { tasksJsonl, verlParquet } from '../export/datasets';
import { errorMessage } from '../errors';
import { greedyJsonl, type GreedyRow, type LogitsFile } from '../export/greedy';
import { exportHfGpt2, importHfGpt2, type ModelFiles, type PolicyTensors } from '../export/hf-gpt2';
import { unzipFiles, zipFiles } from '../export/zip';
import { paramShapes } from '../policy/model';
import type { Checkpoint, PackedTensors } from '../policy/weights';
import type { Trajectory } from '../rl/trajectory';
import type { LabDB, RunRecord, TrajectoryRecord, WeightsRecord } from '../storage/db';
import { getVersion, latestVersion, loraBaseOf, runKind } from '../storage/weights-store';

/** What exporting a run made: the archive and what is in it. */
export interface RunExport {
  fileName: string;
  zip: Uint8Array;
  version: number;
  /** The archive's paths, in order. */
  files: string[];
  trajectories: number;
  tasks: number;
  /** Tasks played greedily into greedy.jsonl (0 when no player was given or the play failed). */
  greedy: number;
  /** Why greedy.jsonl and logits.json were left out: the greedy play failed (the rest is exported). */
  greedyError?: string;
}

/** How many of the longest greedy episodes logits.json holds. */
export const LOGIT_SEQUENCES = 6;

/**
 * Plays a stored version greedily on `tasks` as the page's evaluator does (in its worker:
 * `Evaluations.greedyExport`), returning greedy.jsonl's rows and logits.json.
 */
export type GreedyPlayer = (
  record: Pick<WeightsRecord, 'checkpoint' | 'version'>,
  base: Checkpoint | undefined,
  req: { tasks: EvalTask[]; config: EnvConfig; sequences: number; policy: string },
) => Promise<{ rows: GreedyRow[]; logits: LogitsFile }>;

/** The tasks an export plays greedily: the run kind's built-in held-out and generalisation tasks. */
export function greedyTasks(settings: RunConfig): EvalTask[] {
  return heldOutOf(runBuiltInTasks(settings.task));
}

const text = (s: string) => new TextEncoder().encode(s);

/** A packed checkpoint's tensors on the host, by name. */
function unpacked(p: PackedTensors): PolicyTensors {
  const all = new Float32Array(p.data);
  const out: PolicyTensors = new Map();
  for (const e of p.entries) {
    const n = e.shape.reduce((a, b) => a * b, 1);
    if (e.offset < 0 || e.offset + n > all.length)
      throw new Error(`weights entry ${e.name} lies outside its buffer`);
    out.set(e.name, { shape: [...e.shape], values: all.slice(e.offset, e.offset + n) });
  }
  return out;
}

/**
 * Every parameter a stored version runs with, on the host: a full checkpoint's own, or a LoRA
 * version's merged into its base as `policy/lora.ts` merges them, W + (alpha/r)·A·B.
 */
export function hostPolicy(ckpt: Checkpoint, base: Checkpoint | undefined): PolicyTensors {
  if (!ckpt.lora) return unpacked(ckpt.params);
  if (!base) throw new Error('the LoRA version has no stored full version to merge into');
  const out = unpacked(base.params);
  const adapters = unpacked(ckpt.params);
  const scale = ckpt.lora.alpha / ckpt.lora.rank;
  for (const [name, w] of out) {
    const whole = adapters.get(name);
    if (whole) {
      out.set(name, whole);
      continue;
    }
    const a = adapters.get(`${name}.lora_a`);
    const b = adapters.get(`${name}.lora_b`);
    if (!a || !b) continue;
    const [I, R] = a.shape as [number, number];
    const O = b.shape[1] as number;
    const values = w.values.slice();
    for (let i = 0; i < I; i++)
      for (let r = 0; r < R; r++) {
        const air = (a.values[i * R + r] as number) * scale;
        if (air === 0) continue;
        for (let o = 0; o < O; o++)
          values[i * O + o] = (values[i * O + o] as number) + air * (b.values[r * O + o] as number);
      }
    out.set(name, { shape: w.shape, values });
  }
  return out;
}

/** The run's tasks with their splits: its own suite's (train) or the built-in training tasks, then the held-out and generalisation tasks. */
export function runTasks(settings: RunConfig): (Task | GeneratedTask)[] {
  const built = runBuiltInTasks(settings.task);
  const suite = settings.task.suite;
  if (suite) return [...suite.tasks, ...heldOutOf(built)];
  return [...built, ...wideTrainingTasks(settings.task, built), ...generalisationOf(built)];
}

/** The tests of a relabelled episode's task, as a trajectory row carries them (what its reward is paid on). */
export interface RowTask {
  kind: TaskKind;
  examples: Example[];
  tests: Example[];
  hidden: Example[];
}

/**
 * The task a relabelled (hindsight) episode played: its id holds the program's outputs at a task's
 * inputs (shown, tests, hidden), not the inputs. Those are the inputs of the run's tasks whose
 * relabelled observation is the episode's; null when none is, or two such tasks disagree.
 */
export function relabelledTask(
  taskId: string,
  tokens: readonly number[],
  tasks: readonly Task[],
): RowTask | null {
  if (!taskId.startsWith(RELABELLED_PREFIX)) return null;
  const ys = taskId.slice(RELABELLED_PREFIX.length).split(',').map(Number);
  const prompt = tokens.slice(0, tokens.indexOf(SEP) + 1).join(',');
  const shown = tokens.slice(0, tokens.indexOf(SEP)).filter((t) => t === tokenId('f(')).length;
  const found = new Set<string>();
  let task: RowTask | null = null;
  for (const t of tasks) {
    const inputs = [...t.examples, ...(t.tests ?? []), ...t.hidden];
    if (inputs.length !== ys.length) continue;
    let i = 0;
    const own = (es: readonly Example[]) => es.map((e) => ({ input: e.input, output: ys[i++] as number }));
    const made: RowTask = {
      kind: kindOf(t),
      examples: own(t.examples),
      tests: own(t.tests ?? []),
      hidden: own(t.hidden),
    };
    if (observationTokens(made.examples.slice(0, shown)).join(',') !== prompt) continue;
    found.add(JSON.stringify(made));
    task = made;
  }
  return found.size === 1 ? task : null;
}

/** One stored episode as a row of trajectories.jsonl; `task` the tests of a relabelled episode's task. */
export function trajectoryRow(
  r: Pick<TrajectoryRecord, 'seq' | 'jobId' | 'consumed'>,
  t: Trajectory,
  task: RowTask | null = null,
) {
  return {
    seq: r.seq,
    job: r.jobId,
    task_id: t.taskId,
    level: t.level,
    group: t.group,
    input_ids: t.tokens,
    // 1 where the policy wrote the token: observations and `<run>` reports are masked out.
    loss_mask: t.owned,
    // Behaviour log-probabilities and the version that sampled each token (0 and −1 elsewhere).
    logprobs: t.logProbs,
    versions: t.versions,
    token_rewards: t.rewards,
    reward: t.return,
    turns: t.turns,
    solved: t.solved,
    trained: r.consumed === 1,
    ...(task ? { task } : {}),
  };
}

function readme(
  runId: string,
  version: number,
  settings: RunConfig,
  counts: { tasks: number; trajectories: number; greedy: number | null },
): string {
  const greedy =
    counts.greedy === null
      ? ''
      : `- \`greedy.jsonl\`: ${counts.greedy} held-out and generalisation tasks played greedily by this version, as
  the page's evaluator plays them: \`input_ids\` (the whole episode, run reports included),
  \`loss_mask\`, \`legal\` (for each policy token the ids the grammar allowed; the argmax ran over
  them), \`programs\`, \`actions\`, \`solved\`, \`reward\`. \`logits.json\`: the page's logits on the
  longest of those episodes. \`cluster/check_export.py\` holds the folder to both.
`;
  return `# ${runId}, version ${version}

Exported from Sandbox RL Lab. Contents:

- the policy, as a Hugging Face \`GPT2LMHeadModel\` folder (this folder: config.json,
  model.safetensors, tokenizer.json, tokenizer_config.json with the chat template,
  generation_config.json). The value head is not part of it. Load it with
  \`AutoModelForCausalLM.from_pretrained(".")\` and \`AutoTokenizer.from_pretrained(".")\`.
- \`tasks.jsonl\`: ${counts.tasks} tasks, one JSON row each (\`prompt\`, \`messages\`, \`label\`, \`examples\`,
  \`tests\`, \`hidden\`, \`split\`: train, heldout or generalisation). Train only on \`split == "train"\`.
- \`tasks.parquet\`: the same tasks in verl's schema (\`data_source\`, \`prompt\`, \`ability\`,
  \`reward_model\`, \`extra_info\` with the split).
- \`trajectories.jsonl\`: ${counts.trajectories} stored episodes, one row each: \`input_ids\`, \`loss_mask\` (1 on
  the tokens the policy wrote; observations and run reports 0), \`logprobs\` (behaviour), \`versions\`
  (the policy version that wrote each token, −1 elsewhere), \`token_rewards\` (the reward paid after
  each token, on control tokens), \`reward\`, \`turns\`, \`task_id\` (a relabelled episode's tests in \`task\`).
${greedy}- \`run-config.json\`: the run's settings (task kind ${settings.task.kind}, ${settings.learner.loss}, η = ${settings.pipeline.eta}).

## Train on with TRL

From the lab's repository (\`cluster/\`; \`cluster/setup.sh\` makes the Python environment):

    python cluster/train_trl.py path/to/this/folder trl-out --level all

GRPO on the training tasks of tasks.jsonl, rewarded by \`cluster/sandbox_reward.py\` (the page's
grammar and reward); add \`--cluster\` for real settings. See \`python cluster/train_trl.py --help\`.

## Train on with verl

Use \`tasks.parquet\` as \`data.train_files\` (filter \`extra_info.split == "train"\`), this folder
as \`actor_rollout_ref.model.path\`, and \`cluster/sandbox_reward.py\`'s \`compute_score\` as
\`custom_reward_function.path\` / \`.name\`.
`;
}

/**
 * The export of run `runId` at `version` (its newest stored when omitted); with `play`, its greedy
 * programs (greedy.jsonl) and logits (logits.json) too. Refuses, with the
 * reason, a run that is not stored or not the code-writing policy, a version that is not stored,
 * and a policy GPT-2 cannot hold (the copy head, `hfGpt2Refusal`).
 */
export async function exportRun(
  db: LabDB,
  runId: string,
  version?: number,
  play?: GreedyPlayer,
): Promise<RunExport> {
  const run = await db.get('runs', runId);
  if (!run) throw new Error(`no stored run ${runId}`);
  if (runKind(run) !== 'code') throw new Error(`${runId} is not a run of the code-writing policy`);
  const record: WeightsRecord | undefined =
    version === undefined ? await latestVersion(db, runId) : await getVersion(db, runId, version);
  if (!record)
    throw new Error(
      version === undefined ? `${runId} has no stored version` : `${runId} has no stored version ${version}`,
    );
  const settings = runConfigFromJson(run.config);
  const base = await loraBaseOf(db, record);
  const policy = hostPolicy(record.checkpoint, base);
  const model = exportHfGpt2(record.checkpoint.model, policy, {
    source: 'sandbox-rl-lab',
    run: runId,
    version: String(record.version),
  });
  const tasks = runTasks(settings);
  const range = IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]);
  const stored = await db.getAll('trajectories', range);
  const files = new Map<string, Uint8Array>();
  for (const [name, bytes] of model) files.set(name, bytes);
  files.set('tasks.jsonl', text(tasksJsonl(tasks)));
  files.set('tasks.parquet', verlParquet(tasks));
  files.set(
    'trajectories.jsonl',
    text(
      stored
        .map((r) => {
          const task = relabelledTask(r.trajectory.taskId, r.trajectory.tokens, tasks);
          return `${JSON.stringify(trajectoryRow(r, r.trajectory, task))}\n`;
        })
        .join(''),
    ),
  );
  let greedy = 0;
  let greedyError: string | undefined;
  if (play) {
    try {
      const played = await play(record, base, {
        tasks: greedyTasks(settings),
        config: playEnvOf(settings),
        sequences: LOGIT_SEQUENCES,
        policy: `${runId} version ${record.version}`,
      });
      greedy = played.rows.length;
      files.set('greedy.jsonl', text(greedyJsonl(played.rows)));
      files.set('logits.json', text(JSON.stringify(played.logits)));
    } catch (err) {
      // The policy, tasks and trajectories are ready: they are exported without the greedy play.
      greedyError = errorMessage(err);
    }
  }
  files.set('run-config.json', text(`${JSON.stringify(runConfigToJson(settings), null, 2)}\n`));
  files.set(
    'README.md',
    text(
      readme(runId, record.version, settings, {
        tasks: tasks.length,
        trajectories: stored.length,
        greedy: play && greedyError === undefined ? greedy : null,
      }),
    ),
  );
  return {
    fileName: `${runId}-v${record.version}.zip`,
    zip: await zipFiles(files),
    version: record.version,
    files: [...files.keys()],
    trajectories: stored.length,
    tasks: tasks.length,
    greedy,
    ...(greedyError !== undefined ? { greedyError } : {}),
  };
}

/** A chosen file: its path (a folder's files carry it: `gpt2/config.json`) and bytes. */
export interface PickedFile {
  path: string;
  bytes: Uint8Array;
}

/**
 * The model folder among picked files: a .zip is opened; the folder is the one that holds
 * config.json (a run's export holds it at its root), its files named without that folder.
 */
export async function modelFolderOf(picked: readonly PickedFile[]): Promise<ModelFiles> {
  if (picked.length === 0) throw new Error('no files chosen');
  let all = new Map(picked.map((f) => [f.path, f.bytes]));
  const zip = picked.find((f) => /\.zip$/i.test(f.path));
  if (zip) {
    if (picked.length > 1) throw new Error('choose one .zip, or the files of one folder, not both');
    all = await unzipFiles(zip.bytes);
  }
  const configs = [...all.keys()].filter((p) => p === 'config.json' || p.endsWith('/config.json'));
  if (configs.length === 0) throw new Error('the folder has no config.json');
  // The shallowest config.json names the folder.
  const config = configs.sort((a, b) => a.split('/').length - b.split('/').length)[0] as string;
  const dir = config.slice(0, config.length - 'config.json'.length);
  const out: ModelFiles = new Map();
  for (const [p, bytes] of all)
    if (p.startsWith(dir) && !p.slice(dir.length).includes('/')) out.set(p.slice(dir.length), bytes);
  return out;
}

/** What importing a folder stored. */
export interface Imported {
  runId: string;
  record: RunRecord;
  parameters: number;
}

/** The policy's tensors packed as a checkpoint stores them, in the model's parameter order. */
function packed(tensors: PolicyTensors, order: readonly string[]): PackedTensors {
  const total = order.reduce((n, name) => n + (tensors.get(name)?.values.length ?? 0), 0);
  const data = new Float32Array(total);
  const entries: PackedTensors['entries'] = [];
  let offset = 0;
  for (const name of order) {
    const t = tensors.get(name);
    if (!t) throw new Error(`the policy has no parameter ${name}`);
    entries.push({ name, shape: [...t.shape], dtype: 'float32', offset });
    data.set(t.values, offset);
    offset += t.values.length;
  }
  return { entries, data: data.buffer };
}

/** The id of an imported policy's run. */
export const importedRunId = (at: Date) => `imported-${at.toISOString().replace(/[:.]/g, '-')}`;

/**
 * Stores the GPT-2 folder among `picked` (files of a folder, or a .zip) as a run of its own,
 * labelled `imported <label>`, with the policy as version 0: "start from" offers it as any
 * stored run. Everything is checked (`importHfGpt2`) before anything is written; the run record
 * and its version are written in one transaction.
 */
export async function importPolicy(
  db: LabDB,
  picked: readonly PickedFile[],
  label: string,
  at = new Date(),
): Promise<Imported> {
  const { args, tensors } = importHfGpt2(await modelFolderOf(picked));
  const order = paramShapes(args).map(([name]) => name);
  const checkpoint: Checkpoint = {
    format: 'sandbox-rl-lab/weights@1',
    model: args,
    params: packed(tensors, order),
    step: 0,
  };
  const base = defaultRunConfig();
  const settings: RunConfig = {
    ...base,
    policy: { ...base.policy, model: args, startFrom: null, lora: null },
  };
  const runId = importedRunId(at);
  const now = at.getTime();
  const record: RunRecord = {
    id: runId,
    name: `imported ${label}`,
    createdAt: now,
    updatedAt: now,
    status: 'finished',
    latestVersion: 0,
    config: runConfigToJson(settings),
    kind: 'code',
  };
  const tx = db.transaction(['runs', 'weights'], 'readwrite');
  await Promise.all([
    tx.objectStore('runs').add(record),
    tx
      .objectStore('weights')
      .add({ runId, version: 0, createdAt: now, checkpoint, metrics: {}, milestone: true }),
    tx.done,
  ]);
  const parameters = [...tensors.values()].reduce((n, t) => n + t.values.length, 0);
  return { runId, record, parameters };
}
