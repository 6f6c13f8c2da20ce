import { describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_ARGS } from '../policy/config';
import { paramShapes } from '../policy/model';
import { DEFAULT_LEARNER, type StrategyConfig } from './learner-config';
import {
  adaptRate,
  frozenTrainable,
  gradualTrainable,
  layerOf,
  optimizeStrategy,
  performanceStats,
  selectiveTrainable,
  StrategyRunner,
} from './strategy';

const names = paramShapes({ ...DEFAULT_MODEL_ARGS, nLayers: 2 }).map(([n]) => n);
const runner = (over: Partial<StrategyConfig>) =>
  new StrategyRunner({ ...DEFAULT_LEARNER, learningRate: 3e-3, ...over });

describe('performance statistics', () => {
  it('current, trend, average and stability 1/(1 + std) of a window', () => {
    const w = [0.2, 0.4, 0.3, 0.7];
    const one = performanceStats(w, 1);
    expect(one.current).toBeCloseTo(0.7, 12);
    expect(one.trend).toBeCloseTo(0.4, 12); // the seed's: newest less the one before
    expect(one.average).toBeCloseTo(0.4, 12);
    expect(one.stability).toBeCloseTo(1 / (1 + Math.sqrt(0.035)), 12);
    const two = performanceStats(w, 2);
    expect(two.current).toBeCloseTo(0.5, 12);
    expect(two.trend).toBeCloseTo(0.2, 12);
    // Too few samples: no trend, and no std before 3.
    expect(performanceStats([0.5], 1)).toMatchObject({ trend: 0, stability: 1 });
    expect(performanceStats([0.1, 0.9], 1).stability).toBe(1);
  });
});

describe('adaptive', () => {
  const cfg = { ...DEFAULT_LEARNER, adaptiveMinRate: 1e-3, adaptiveMaxRate: 5e-3 };
  it('multiplies the rate by 1.1 on a rising trend and 0.9 on a falling one, within its clamp', () => {
    expect(adaptRate(3e-3, 0.05, cfg)).toBeCloseTo(3.3e-3, 12);
    expect(adaptRate(3e-3, -0.05, cfg)).toBeCloseTo(2.7e-3, 12);
    expect(adaptRate(3e-3, 0.005, cfg)).toBe(3e-3); // within ±0.01: flat
    expect(adaptRate(4.9e-3, 0.05, cfg)).toBe(5e-3);
    expect(adaptRate(1.05e-3, -0.05, cfg)).toBe(1e-3);
  });

  it('over a run: the rate climbs ×1.1 per rising batch to the clamp, then falls ×0.9', () => {
    const r = runner({ strategy: 'adaptive', trendSpan: 1, adaptiveMinRate: 1e-3, adaptiveMaxRate: 4e-3 });
    const rates: number[] = [];
    const perf = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.5, 0.4, 0.3];
    perf.forEach((p, v) => rates.push(r.plan(v, p, 3e-3).rate));
    // The first update starts at the scheduled rate; each rising batch ×1.1 up to 4e-3.
    const expected = [3e-3, 3.3e-3, 3.63e-3, 3.993e-3, 4e-3, 4e-3];
    expected.forEach((e, i) => expect(rates[i]).toBeCloseTo(e, 12));
    expect(rates[6]).toBeCloseTo(4e-3 * 0.9, 12);
    expect(rates[8]).toBeCloseTo(4e-3 * 0.9 ** 3, 12);
    // Other strategies pass the scheduled rate through.
    expect(runner({ strategy: 'full' }).plan(0, 0.5, 2e-3).rate).toBe(2e-3);
  });
});

describe('which tensors train', () => {
  it('names each tensor’s layer', () => {
    expect(
      ['tok_emb', 'pos_emb', 'h0.mlp.w1', 'h1.attn.wqkv.lora_a', 'head.w', 'ln_f.g'].map(layerOf),
    ).toEqual(['embeddings', 'embeddings', 0, 1, 'heads', 'heads']);
  });

  it('frozen: the embeddings and the lowest blocks chosen stay out', () => {
    const t = frozenTrainable(names, { freezeEmbeddings: true, frozenBlocks: 1, freezeHeads: false });
    expect(t.has('tok_emb') || t.has('pos_emb') || [...t].some((n) => n.startsWith('h0.'))).toBe(false);
    expect([...t].filter((n) => n.startsWith('h1.'))).toHaveLength(12);
    expect(t.has('head.w') && t.has('value.b') && t.has('ln_f.g')).toBe(true);
    const heads = frozenTrainable(names, { freezeEmbeddings: false, frozenBlocks: 0, freezeHeads: true });
    expect(heads.size).toBe(names.length - 5);
  });

  it('frozen, tied embeddings: tok_emb (the head too) goes with the embeddings, not the heads', () => {
    const tied = paramShapes({ ...DEFAULT_MODEL_ARGS, nLayers: 2, tieEmbeddings: true }).map(([n]) => n);
    expect(tied).toHaveLength(names.length - 1);
    const heads = frozenTrainable(tied, { freezeEmbeddings: false, frozenBlocks: 0, freezeHeads: true });
    expect([...heads].filter((n) => layerOf(n) === 'heads')).toEqual([]);
    expect(heads.has('tok_emb')).toBe(true);
    const emb = frozenTrainable(tied, { freezeEmbeddings: true, frozenBlocks: 0, freezeHeads: false });
    expect(emb.has('tok_emb')).toBe(false);
    expect(emb.has('ln_f.g') && emb.has('value.w')).toBe(true);
  });

  it('gradual: the heads, then one block more every `every` versions from the top, the embeddings last', () => {
    const at = (v: number) => [...gradualTrainable(names, 2, v, 10)];
    const layers = (v: number) => [...new Set(at(v).map(layerOf))];
    expect(layers(0)).toEqual(['heads']);
    expect(layers(9)).toEqual(['heads']);
    expect(layers(10)).toEqual([1, 'heads']);
    expect(layers(20)).toEqual([0, 1, 'heads']);
    expect(layers(29)).toEqual([0, 1, 'heads']);
    expect(at(30)).toHaveLength(names.length);
  });

  it('selective: only the tensors above the threshold', () => {
    const imp = new Map([
      ['a', 1],
      ['b', 0.3],
      ['c', 0.31],
    ]);
    expect([...selectiveTrainable(['a', 'b', 'c', 'd'], imp, 0.3)]).toEqual(['a', 'c']);
  });
});

describe('auto (the seed’s optimize_strategy)', () => {
  it('switches to selective when poor and falling, to adaptive when good, rising and stable', () => {
    const poor = performanceStats([0.4, 0.3], 1);
    expect(optimizeStrategy('full', poor, 0.9)?.to).toBe('selective');
    expect(optimizeStrategy('selective', poor, 0.9)).toBeNull();
    const good = performanceStats([0.82, 0.84, 0.86], 1);
    expect(optimizeStrategy('selective', good, 0.9)).toMatchObject({
      to: 'adaptive',
      reason: expect.stringMatching(/good and rising \(performance 0\.86, trend 0\.020, stability 0\.98\)/),
    });
    expect(optimizeStrategy('selective', good, 0.99)).toBeNull(); // not stable enough
  });

  it('over a run: starts full, switches once the window is full, each switch with its reason', () => {
    const r = runner({ strategy: 'auto', autoWindow: 3, trendSpan: 1, autoMinStability: 0 });
    const seen = [0.4, 0.35, 0.3, 0.3, 0.5, 0.6, 0.85, 0.9, 0.95].map((p, v) => r.plan(v, p, 3e-3));
    expect(seen.map((p) => p.strategy)).toEqual([
      'full',
      'full',
      'selective', // the window is full: 0.3 < 0.5, falling
      'selective', // a fresh window after the switch: 0.3, 0.5, 0.6 is neither
      'selective',
      'selective',
      'adaptive', // 0.85 > 0.8, rising
      'adaptive',
      'adaptive',
    ]);
    expect(seen[6]?.switched).toMatchObject({ version: 6, from: 'selective', to: 'adaptive' });
    expect(r.switches.map((s) => [s.version, s.from, s.to])).toEqual([
      [2, 'full', 'selective'],
      [6, 'selective', 'adaptive'],
    ]);
    expect(r.switches[0]?.reason).toMatch(/^poor and falling \(performance 0\.30, trend -0\.050/);
  });
});
