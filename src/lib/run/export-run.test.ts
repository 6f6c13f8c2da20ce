import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { DEFAULT_ENV_CONFIG } from '../env/config';
import type { EvalTask } from '../env/evaluate';
import { RELABELLED_PREFIX, type Example, type Task } from '../env/suite';
import { builtInTasks } from '../env/task-kinds';
import { observationTokens } from '../env/tokenizer';
import { SEP, VOCAB_SIZE } from '../env/vocab';
import { defaultRunConfig, runConfigToJson } from '../config/run-config';
import type { GreedyRow } from '../export/greedy';
import { importHfGpt2, type PolicyTensors } from '../export/hf-gpt2';
import { readSafetensors } from '../export/safetensors';
import { unzipFiles } from '../export/zip';
import type { ModelArgs } from '../policy/config';
import { paramShapes } from '../policy/model';
import type { Checkpoint } from '../policy/weights';
import type { Trajectory } from '../rl/trajectory';
import { openLabDb, type LabDB } from '../storage/db';
import { ensureRun, getVersion, listRuns, putVersion } from '../storage/weights-store';
import { putTrajectories } from '../storage/trajectories-store';
import { exportRun, hostPolicy, importPolicy, relabelledTask, type PickedFile } from './export-run';

const ARGS: ModelArgs = {
  vocabSize: VOCAB_SIZE,
  contextLength: 16,
  dModel: 8,
  nLayers: 1,
  nHeads: 2,
  dMlp: 16,
};

/** A checkpoint of `args` whose every value is distinct (value head included). */
function checkpoint(args: ModelArgs): { ckpt: Checkpoint; tensors: PolicyTensors } {
  const shapes = paramShapes(args);
  const total = shapes.reduce((n, [, s]) => n + s.reduce((a, b) => a * b, 1), 0);
  const data = new Float32Array(total).map((_, i) => Math.sin(i) / 3);
  const tensors: PolicyTensors = new Map();
  let offset = 0;
  const entries = shapes.map(([name, shape]) => {
    const n = shape.reduce((a, b) => a * b, 1);
    tensors.set(name, { shape, values: data.slice(offset, offset + n) });
    const e = { name, shape, dtype: 'float32' as const, offset };
    offset += n;
    return e;
  });
  return {
    ckpt: {
      format: 'sandbox-rl-lab/weights@1',
      model: args,
      params: { entries, data: data.buffer },
      step: 3,
    },
    tensors,
  };
}

const trajectory = (taskId: string): Trajectory => ({
  taskId,
  level: 'easy',
  group: 'g',
  tokens: [1, 5, 6, 7],
  owned: [0, 0, 1, 1],
  rewards: [0, 0, 0, 1],
  logProbs: [0, 0, -0.5, -0.25],
  values: [0, 0, 0, 0],
  versions: [-1, -1, 2, 2],
  legal: new Uint8Array(0),
  solved: true,
  turns: 1,
  return: 1,
  parts: {} as Trajectory['parts'],
});

let n = 0;
async function storedRun(args = ARGS): Promise<{ db: LabDB; tensors: PolicyTensors }> {
  const db = await openLabDb(`export-run-${n++}`);
  const { ckpt, tensors } = checkpoint(args);
  const config = runConfigToJson(defaultRunConfig(2));
  await ensureRun(db, { id: 'run-a', name: 'run-a', config, kind: 'code' });
  await putVersion(db, {
    runId: 'run-a',
    version: 4,
    createdAt: 1,
    checkpoint: ckpt,
    metrics: {},
    milestone: false,
  });
  await putTrajectories(db, [
    { runId: 'run-a', seq: 0, jobId: 0, consumed: 1, createdAt: 1, trajectory: trajectory('t1') },
    { runId: 'run-a', seq: 1, jobId: 0, consumed: 0, createdAt: 1, trajectory: trajectory('t2') },
  ]);
  return { db, tensors };
}

const files = (m: Map<string, Uint8Array>, prefix = ''): PickedFile[] =>
  [...m].map(([path, bytes]) => ({ path: `${prefix}${path}`, bytes }));

describe('exportRun', () => {
  it('zips the newest version as a GPT-2 folder with the tasks, trajectories, config and a README', async () => {
    const { db, tensors } = await storedRun();
    const out = await exportRun(db, 'run-a');
    expect(out.fileName).toBe('run-a-v4.zip');
    const zip = await unzipFiles(out.zip);
    expect([...zip.keys()].sort()).toEqual(
      [
        'README.md',
        'config.json',
        'generation_config.json',
        'model.safetensors',
        'run-config.json',
        'tasks.jsonl',
        'tasks.parquet',
        'tokenizer.json',
        'tokenizer_config.json',
        'trajectories.jsonl',
      ].sort(),
    );
    const back = importHfGpt2(zip);
    expect(back.args).toEqual(ARGS);
    expect(back.tensors.get('h0.attn.wqkv')?.values).toEqual(tensors.get('h0.attn.wqkv')?.values);
    expect(back.tensors.get('head.w')?.values).toEqual(tensors.get('head.w')?.values);
    expect(readSafetensors(zip.get('model.safetensors') as Uint8Array).metadata).toMatchObject({
      run: 'run-a',
      version: '4',
    });
    const rows = new TextDecoder()
      .decode(zip.get('trajectories.jsonl'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      task_id: 't1',
      input_ids: [1, 5, 6, 7],
      loss_mask: [0, 0, 1, 1],
      versions: [-1, -1, 2, 2],
      reward: 1,
      turns: 1,
    });
    const splits = new Set(
      new TextDecoder()
        .decode(zip.get('tasks.jsonl'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).split),
    );
    expect(splits).toEqual(new Set(['train', 'heldout', 'generalisation']));
    const readme = new TextDecoder().decode(zip.get('README.md'));
    expect(readme).toMatch(/train_trl\.py/);
    expect(readme).not.toMatch(/greedy\.jsonl/); // no player, no greedy play
    expect(out.greedy).toBe(0);
  });

  it("with a player, adds the version's greedy play of the held-out and generalisation tasks and its logits", async () => {
    const { db } = await storedRun();
    const asked: { version: number; tasks: EvalTask[]; maxTurns: number; sequences: number }[] = [];
    const row: GreedyRow = {
      task_id: 'a',
      kind: 'examples',
      level: 'easy',
      split: 'heldout',
      prompt_length: 2,
      input_ids: [1, 5, 6, 7],
      loss_mask: [0, 0, 1, 1],
      legal: [[6, 9], [7]],
      programs: ['x'],
      actions: ['submit'],
      solved: true,
      reward: 1.2,
    };
    const out = await exportRun(db, 'run-a', undefined, async (record, _base, req) => {
      asked.push({
        version: record.version,
        tasks: req.tasks,
        maxTurns: req.config.maxTurns,
        sequences: req.sequences,
      });
      return {
        rows: [row],
        logits: {
          backend: 'cpu',
          policy: req.policy,
          model: ARGS,
          sequences: [{ ids: [1], text: '<bos>' }],
          logits: [[[0]]],
        },
      };
    });
    expect(asked.map((a) => [a.version, a.maxTurns, a.sequences])).toEqual([
      [4, DEFAULT_ENV_CONFIG.maxTurns, 6],
    ]);
    const tasks = asked[0]?.tasks ?? [];
    expect(tasks.length).toBeGreaterThan(0);
    expect(tasks.every((t) => t.heldOut)).toBe(true);
    expect(tasks.some((t) => t.generalisation)).toBe(true);
    expect(out.greedy).toBe(1);
    const zip = await unzipFiles(out.zip);
    expect(JSON.parse(new TextDecoder().decode(zip.get('greedy.jsonl')))).toEqual(row);
    expect(JSON.parse(new TextDecoder().decode(zip.get('logits.json')))).toMatchObject({
      policy: 'run-a version 4',
    });
    expect(new TextDecoder().decode(zip.get('README.md'))).toMatch(/greedy\.jsonl.: 1 held-out/);
  });

  it('exports the rest when the greedy play fails, saying why greedy.jsonl is missing', async () => {
    const { db } = await storedRun();
    const out = await exportRun(db, 'run-a', undefined, async () => {
      throw new Error('the evaluation worker crashed');
    });
    expect(out.greedyError).toBe('the evaluation worker crashed');
    expect(out.greedy).toBe(0);
    const zip = await unzipFiles(out.zip);
    expect(zip.has('greedy.jsonl')).toBe(false);
    expect(zip.has('model.safetensors') || [...zip.keys()].some((k) => k.endsWith('model.safetensors'))).toBe(
      true,
    );
    expect(zip.has('trajectories.jsonl')).toBe(true);
  });

  it('refuses a policy with the copy head, saying why', async () => {
    const { db } = await storedRun({ ...ARGS, pointerDim: 4 });
    await expect(exportRun(db, 'run-a')).rejects.toThrow(/copy \(pointer\) head/);
    await expect(exportRun(db, 'nope')).rejects.toThrow(/no stored run nope/);
  });
});

describe('relabelledTask', () => {
  it("finds a relabelled episode's inputs among the run's tasks by its observation", () => {
    const tasks = builtInTasks('examples', 1).filter((t) => !t.heldOut);
    const t = tasks[0] as Task;
    const inputs = [...t.examples, ...t.hidden].map((e) => e.input);
    const ys = inputs.map((x) => 2 * x - 1);
    const id = `${RELABELLED_PREFIX}${ys.join(',')}`;
    const own = (es: readonly Example[]) => es.map((e) => ({ input: e.input, output: 2 * e.input - 1 }));
    const tokens = [...observationTokens(own(t.examples)), 5, 6, SEP];
    expect(relabelledTask(id, tokens, tasks)).toEqual({
      kind: 'examples',
      examples: own(t.examples),
      tests: [],
      hidden: own(t.hidden),
    });
    // An observation no task's inputs make, and an id that is not a relabelled one.
    const other = [...observationTokens([{ input: 77, output: 1 }]), SEP];
    expect(relabelledTask(id, other, tasks)).toBeNull();
    expect(relabelledTask(t.id, tokens, tasks)).toBeNull();
  });
});

describe('hostPolicy', () => {
  it('merges a LoRA version into its base as W + (alpha/r)·A·B', () => {
    const base: Checkpoint = {
      format: 'sandbox-rl-lab/weights@1',
      model: ARGS,
      params: {
        entries: [{ name: 'w', shape: [2, 2], dtype: 'float32', offset: 0 }],
        data: new Float32Array([1, 2, 3, 4]).buffer,
      },
      step: 0,
    };
    const lora: Checkpoint = {
      ...base,
      lora: { rank: 1, alpha: 2 },
      params: {
        entries: [
          { name: 'w.lora_a', shape: [2, 1], dtype: 'float32', offset: 0 },
          { name: 'w.lora_b', shape: [1, 2], dtype: 'float32', offset: 2 },
        ],
        data: new Float32Array([1, 2, 10, 20]).buffer,
      },
    };
    // A·B = [[10, 20], [20, 40]], times 2.
    expect([...(hostPolicy(lora, base).get('w')?.values ?? [])]).toEqual([21, 42, 43, 84]);
  });
});

describe('importPolicy', () => {
  it('stores an exported folder (a zip, or files under a folder) as a run with one version', async () => {
    const { db, tensors } = await storedRun();
    const out = await exportRun(db, 'run-a');
    const imported = await importPolicy(
      db,
      [{ path: 'run-a-v4.zip', bytes: out.zip }],
      'run-a-v4.zip',
      new Date(5),
    );
    expect(imported.record).toMatchObject({ name: 'imported run-a-v4.zip', latestVersion: 0, kind: 'code' });
    const v = await getVersion(db, imported.runId, 0);
    expect(v?.checkpoint.model).toEqual(ARGS);
    expect(v?.checkpoint.params.entries.map((e) => e.name)).toEqual(paramShapes(ARGS).map(([k]) => k));
    const first = v?.checkpoint.params.entries[0];
    expect(new Float32Array(v?.checkpoint.params.data as ArrayBuffer, 0, 4)).toEqual(
      tensors.get(first?.name ?? '')?.values.slice(0, 4),
    );
    const folder = await unzipFiles(out.zip);
    const again = await importPolicy(db, files(folder, 'gpt2/'), 'gpt2', new Date(6));
    expect((await listRuns(db, 'code')).map((r) => r.id).sort()).toEqual(
      ['run-a', imported.runId, again.runId].sort(),
    );
  });

  it('stores a tied policy’s export as a tied run: no head.w, the same embedding', async () => {
    const tied: ModelArgs = { ...ARGS, tieEmbeddings: true };
    const { db, tensors } = await storedRun(tied);
    const out = await exportRun(db, 'run-a');
    const imported = await importPolicy(db, [{ path: 'tied.zip', bytes: out.zip }], 'tied.zip', new Date(7));
    const v = await getVersion(db, imported.runId, 0);
    expect(v?.checkpoint.model).toEqual(tied);
    const names = v?.checkpoint.params.entries.map((e) => e.name) ?? [];
    expect(names).toEqual(paramShapes(tied).map(([k]) => k));
    expect(names).not.toContain('head.w');
    const emb = v?.checkpoint.params.entries.find((e) => e.name === 'tok_emb');
    const size = VOCAB_SIZE * tied.dModel;
    expect(new Float32Array(v?.checkpoint.params.data as ArrayBuffer, 4 * (emb?.offset ?? 0), size)).toEqual(
      tensors.get('tok_emb')?.values,
    );
    expect(imported.record.config).toMatchObject({ policy: { model: tied } });
  });

  it('refuses a wrong vocabulary size or a truncated model.safetensors, storing nothing', async () => {
    const { db } = await storedRun();
    const folder = await unzipFiles((await exportRun(db, 'run-a')).zip);
    const config = JSON.parse(new TextDecoder().decode(folder.get('config.json')));
    const wrongVocab = new Map(folder).set(
      'config.json',
      new TextEncoder().encode(JSON.stringify({ ...config, vocab_size: VOCAB_SIZE + 7 })),
    );
    const st = folder.get('model.safetensors') as Uint8Array;
    const truncated = new Map(folder).set('model.safetensors', st.slice(0, st.length - 100));
    await expect(importPolicy(db, files(wrongVocab), 'x')).rejects.toThrow(/vocab_size/);
    await expect(importPolicy(db, files(truncated), 'x')).rejects.toThrow(/model\.safetensors/);
    await expect(importPolicy(db, files(new Map([['x.bin', st]])), 'x')).rejects.toThrow(/no config\.json/);
    expect((await listRuns(db)).map((r) => r.id)).toEqual(['run-a']);
  });
});
