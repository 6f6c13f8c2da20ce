import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { importanceRecord, seedImportance, seedImportanceOf } from '../rl/importance';
import {
  cellText,
  describeHeatMap,
  groupOf,
  heatColor,
  importanceHeatMap,
  measuredSteps,
  thinEvenly,
  type ImportanceStep,
} from './importance-map';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

const NAMES = [
  'tok_emb',
  'pos_emb',
  'h0.ln1.g',
  'h0.attn.wqkv',
  'h0.ln2.g',
  'h0.mlp.w1',
  'h1.attn.wqkv',
  'h1.mlp.w2',
  'ln_f.g',
  'head.w',
  'value.b',
];

const step = (version: number, seed?: Record<string, number>, gradient: Record<string, number> = {}) =>
  ({ version, ...(seed ? { strategy: { importance: { seed, gradient } } } : {}) }) as ImportanceStep;

describe('rows', () => {
  it('groups the tensors: embeddings, each block’s attention and MLP, heads, in that order', () => {
    const rec = Object.fromEntries([...NAMES].reverse().map((n, i) => [n, i / 10]));
    const map = importanceHeatMap([step(10, rec)]);
    expect(map.groups.map((g) => g.label)).toEqual([
      'Embeddings',
      'Block 0 · attention',
      'Block 0 · MLP',
      'Block 1 · attention',
      'Block 1 · MLP',
      'Heads',
    ]);
    expect(map.groups.find((g) => g.id === 'h0.attn')?.rows).toEqual(['h0.attn.wqkv', 'h0.ln1.g']);
    expect(map.groups.find((g) => g.id === 'heads')?.rows).toEqual(['value.b', 'head.w', 'ln_f.g']);
    expect(groupOf('h1.mlp.w1.lora_a').id).toBe('h1.mlp'); // an adapter goes with its matrix
    expect(groupOf('copy.wq').id).toBe('heads');
  });
});

describe('columns', () => {
  it('are the measured versions, one each, ascending', () => {
    const steps = [step(3), step(10, { a: 1 }), step(11), step(20, { a: 0.5 }), step(20, { a: 0.4 })];
    expect(measuredSteps(steps).map((s) => s.version)).toEqual([10, 20]);
    const map = importanceHeatMap(steps);
    expect(map.versions).toEqual([10, 20]);
    expect(map.cells.get('a')).toEqual([1, 0.4]); // the last report of a version wins
    expect(importanceHeatMap([...steps].reverse()).versions).toEqual([10, 20]);
  });

  it('thin a long run evenly, keeping the first and the newest', () => {
    const xs = Array.from({ length: 100 }, (_, i) => i);
    const t = thinEvenly(xs, 10);
    expect(t).toHaveLength(10);
    expect(t[0]).toBe(0);
    expect(t.at(-1)).toBe(99);
    for (let i = 1; i < t.length; i++) expect((t[i] ?? 0) - (t[i - 1] ?? 0)).toBeGreaterThanOrEqual(10);
    expect(thinEvenly([1, 2, 3], 10)).toEqual([1, 2, 3]);
    const steps = Array.from({ length: 300 }, (_, i) => step(10 * (i + 1), { a: i / 300 }));
    const map = importanceHeatMap(steps, 'seed', 48);
    expect(map.versions).toHaveLength(48);
    expect(map.measured).toBe(300);
    expect(map.versions.at(-1)).toBe(3000);
    expect(describeHeatMap(map)).toContain('48 of 300 measured');
  });
});

describe('cells', () => {
  it("show the seed's formula of a known tensor, normalised to the largest", async () => {
    // What the trainer does every importanceEvery versions (rl/importance.ts), on two small tensors.
    const tensors = new Map<string, tf.Tensor>([
      ['h0.attn.wqkv', tf.tensor2d([1, 2, 3, 4], [2, 2])],
      ['h0.mlp.b1', tf.tensor1d([-2, 2])],
      ['value.b', tf.zeros([1])],
    ]);
    const seed = importanceRecord(await seedImportance(tensors));
    tf.dispose([...tensors.values()]);
    const map = importanceHeatMap([step(10, seed)]);
    // 0.4·var + 0.3·mean|w| + 0.3·‖w‖: [1, 2, 3, 4] → 0.4·1.25 + 0.3·2.5 + 0.3·√30; [−2, 2] → 1.6 + 0.6 + 0.3·√8.
    const a = 0.4 * 1.25 + 0.3 * 2.5 + 0.3 * Math.sqrt(30);
    const b = 1.6 + 0.6 + 0.3 * Math.sqrt(8);
    expect(seedImportanceOf([1, 2, 3, 4])).toBeCloseTo(a, 12);
    expect(map.cells.get('h0.attn.wqkv')?.[0]).toBeCloseTo(a / b, 4);
    expect(map.cells.get('h0.mlp.b1')?.[0]).toBe(1);
    expect(map.cells.get('value.b')?.[0]).toBe(0);
    expect(cellText(map.cells.get('h0.attn.wqkv')?.[0] ?? null)).toBe((a / b).toFixed(2));
  });

  it('read the measure chosen; a tensor the gradient measure skipped is not measured', () => {
    const steps = [step(10, { a: 1, b: 0.5 }, { a: 0.2 }), step(20, { a: 1, b: 0.25 }, { a: 1, b: 0.3 })];
    const grad = importanceHeatMap(steps, 'gradient');
    expect(grad.cells.get('a')).toEqual([0.2, 1]);
    expect(grad.cells.get('b')).toEqual([null, 0.3]);
    expect(importanceHeatMap(steps).cells.get('b')).toEqual([0.5, 0.25]);
    expect(cellText(null)).toBe('not measured');
  });
});

describe('colour and words', () => {
  it('goes from dark to bright, clamped', () => {
    expect(heatColor(0)).toBe('rgb(68, 1, 84)');
    expect(heatColor(1)).toBe('rgb(253, 231, 37)');
    expect(heatColor(2)).toBe(heatColor(1));
    expect(heatColor(Number.NaN)).toBe(heatColor(0));
    const lum = (c: string) => (c.match(/\d+/g) ?? []).map(Number).reduce((s, x) => s + x, 0);
    for (let v = 0.1; v <= 1; v += 0.1)
      expect(lum(heatColor(v))).toBeGreaterThan(lum(heatColor(v - 0.1)) - 1);
  });

  it('says what is drawn and the most important tensors at the newest version', () => {
    expect(describeHeatMap(importanceHeatMap([]))).toBe('No importance measured yet.');
    const map = importanceHeatMap([step(10, { a: 1, b: 0.5, c: 0.2, d: 0.1, e: 0 })]);
    expect(describeHeatMap(map)).toBe(
      "seed's importance of 5 tensors at 1 versions, from 10 to 10. At version 10 the most important: a 1.00, b 0.50, c 0.20; the least: e 0.00.",
    );
  });
});
