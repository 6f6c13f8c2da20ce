import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ENV_CONFIG, TOOLUSE_ENV_CONFIG } from '../env/config';
import { builtInTasks } from '../env/task-kinds';
import { tokenText, VOCAB_SIZE } from '../env/vocab';
import type { ModelArgs } from '../policy/config';
import { initParams } from '../policy/model';
import { CachedPolicyAgent, DEFAULT_SAMPLER } from '../policy/sampler';
import type { QuickJSSandbox } from '../sandbox/quickjs';
import { createNodeQuickJS } from '../sandbox/quickjs-node';
import { greedyJsonl, greedyRows, logitSequences, logitsFile, type GreedyRow } from './greedy';

const ARGS: ModelArgs = {
  vocabSize: VOCAB_SIZE,
  contextLength: 64,
  dModel: 16,
  nLayers: 1,
  nHeads: 2,
  dMlp: 32,
};

let sandbox: QuickJSSandbox;
beforeAll(async () => {
  await tf.setBackend('cpu');
  sandbox = await createNodeQuickJS();
});
afterAll(() => sandbox.dispose());

/** Index of the largest of `logits` among `ids`. */
const argmaxOver = (logits: readonly number[], ids: readonly number[]) =>
  ids.reduce((best, id) => ((logits[id] ?? -Infinity) > (logits[best] ?? -Infinity) ? id : best));

describe('greedyRows', () => {
  it('records each episode with its legal ids, and each policy token is the argmax of the logits over them', async () => {
    const params = initParams(ARGS, 7);
    const agent = new CachedPolicyAgent('policy', params, ARGS, { ...DEFAULT_SAMPLER, greedy: true });
    const examples = builtInTasks('examples', 1)
      .filter((t) => t.heldOut)
      .slice(0, 3);
    const tools = builtInTasks('tooluse', 1)
      .filter((t) => t.heldOut)
      .slice(0, 3);
    const rows: GreedyRow[] = [
      ...(await greedyRows(examples, agent, sandbox, DEFAULT_ENV_CONFIG)),
      ...(await greedyRows(tools, agent, sandbox, TOOLUSE_ENV_CONFIG)),
    ];
    agent.dispose();
    expect(rows.map((r) => r.task_id)).toEqual([...examples, ...tools].map((t) => t.id));
    expect(rows.every((r) => r.split === 'heldout')).toBe(true);
    expect(rows.map((r) => r.kind)).toEqual([
      'examples',
      'examples',
      'examples',
      'tooluse',
      'tooluse',
      'tooluse',
    ]);
    const file = await logitsFile(
      params,
      ARGS,
      rows.map((r) => r.input_ids),
      'test',
    );
    let checked = 0;
    rows.forEach((r, i) => {
      const owned = r.loss_mask.flatMap((m, p) => (m ? [p] : []));
      expect(r.legal).toHaveLength(owned.length);
      expect(r.input_ids.slice(0, r.prompt_length).every((_, p) => r.loss_mask[p] === 0)).toBe(true);
      owned.forEach((p, k) => {
        const legal = r.legal[k] as number[];
        expect(legal).toContain(r.input_ids[p]);
        expect(argmaxOver(file.logits[i]?.[p - 1] ?? [], legal)).toBe(r.input_ids[p]);
        checked += 1;
      });
      // The programs are the policy's tokens of each turn, its control token left out.
      const written = owned.map((p) => tokenText(r.input_ids[p] as number)).join(' ');
      const turns = written.split(/ ?<(?:run|submit)> ?/).filter((s) => s !== '');
      expect(turns.map((t) => t.replace(/ /g, ''))).toEqual(r.programs.filter((p) => p !== ''));
      expect(r.actions).toHaveLength(r.programs.length);
    });
    expect(checked).toBeGreaterThan(rows.length);
    expect(file.sequences[0]?.text.startsWith('<bos>')).toBe(true);
    expect(
      greedyJsonl(rows)
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as GreedyRow),
    ).toEqual(rows);
    tf.dispose([...params.values()]);
  });
});

describe('logitSequences', () => {
  it('takes the longest distinct episodes first', () => {
    const row = (ids: number[]) => ({ input_ids: ids }) as GreedyRow;
    const rows = [row([1, 2]), row([1, 2, 3]), row([1, 2]), row([4])];
    expect(logitSequences(rows, 2)).toEqual([
      [1, 2, 3],
      [1, 2],
    ]);
    expect(logitSequences(rows, 9)).toEqual([[1, 2, 3], [1, 2], [4]]);
  });
});
