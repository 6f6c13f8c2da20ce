import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QuickJSSandbox } from '../sandbox/quickjs';
import { createNodeQuickJS } from '../sandbox/quickjs-node';
import { DEFAULT_ENV_CONFIG, DEFAULT_REWARD, type EnvConfig } from './config';
import { Episode } from './episode';
import type { Task } from './suite';
import { renderTokens, sourceToTokens } from './tokenizer';
import { RUN, SUBMIT, tokenId } from './vocab';

let sandbox: QuickJSSandbox;
beforeAll(async () => {
  sandbox = await createNodeQuickJS();
});
afterAll(() => sandbox.dispose());

const task: Task = {
  id: 'double-plus-one',
  level: 'easy',
  examples: [
    { input: 1, output: 3 },
    { input: 2, output: 5 },
  ],
  hidden: [
    { input: 0, output: 1 },
    { input: 3, output: 7 },
    { input: 5, output: 11 },
    { input: 10, output: 21 },
  ],
};

/** Writes `src` then the control token; returns the reward of the turn. */
async function turn(ep: Episode, src: string, control: number): Promise<number> {
  for (const t of sourceToTokens(src)) await ep.step(tokenId(t), sandbox);
  return (await ep.step(control, sandbox)).reward;
}
const w = DEFAULT_REWARD;

describe('code-writing episode', () => {
  it('starts from the examples and only lets a complete program end a turn', () => {
    const ep = new Episode(task);
    expect(renderTokens(ep.tokens)).toBe('<bos> f( 1 )= 3 ; f( 2 )= 5 <sep>');
    expect(ep.legalTokens()).not.toContain(RUN);
    expect(ep.legalMask().reduce((a, b) => a + b, 0)).toBe(13); // 10 digits, x, (, unary -
  });

  it('pays the full reward for a correct submit and ends the episode', async () => {
    const ep = new Episode(task);
    const r = await turn(ep, 'x*2+1', SUBMIT);
    expect(ep.done).toBe(true);
    expect(ep.stop).toBe('submit');
    expect(ep.solved).toBe(true);
    expect(r).toBeCloseTo(w.pass + w.ranOk + w.closeness - w.turnCost, 10);
    expect(ep.parts).toMatchObject({
      pass: 1,
      ranOk: w.ranOk,
      closeness: w.closeness,
      turnCost: -w.turnCost,
      noSubmit: 0,
    });
    expect(ep.parts.total).toBeCloseTo(r, 10);
    expect(ep.sandboxMs).toBeGreaterThan(0); // the submit's run, timed by the sandbox
    // The reward sits on the control token; the policy owns the program tokens and the control token.
    expect(ep.rewards[ep.rewards.length - 1]).toBeCloseTo(r, 10);
    expect(ep.owned.slice(ep.promptLength)).toEqual([1, 1, 1, 1, 1, 1]);
  });

  it('pays a part of pass and closeness for a partly right submit', async () => {
    const ep = new Episode(task);
    await turn(ep, 'x+x', SUBMIT); // 0, 6, 10, 20 vs 1, 7, 11, 21: 0 passed, each off by 1
    expect(ep.parts.pass).toBe(0);
    expect(ep.parts.closeness).toBeCloseTo(w.closeness * 0.5, 10);
    const ep2 = new Episode(task);
    await turn(ep2, 'x%2?x*2+1:1', SUBMIT); // odd inputs right (3, 5), 0 → 1 right, 10 → 1 wrong
    expect(ep2.turns[0]?.passed).toBe(3);
    expect(ep2.parts.pass).toBeCloseTo(0.75, 10);
    expect(ep2.parts.closeness).toBeCloseTo((w.closeness * (3 + 1 / 21)) / 4, 10);
  });

  it('shows outputs after <run> and keeps going', async () => {
    const ep = new Episode(task);
    const r = await turn(ep, 'x+2', RUN);
    expect(r).toBeCloseTo(w.ranOk - w.turnCost, 10);
    expect(ep.done).toBe(false);
    expect(renderTokens(ep.tokens.slice(-5))).toBe('got 3 ; 4 <sep>');
    expect(ep.owned.slice(-5)).toEqual([0, 0, 0, 0, 0]);
    await turn(ep, '2*x+1', SUBMIT);
    expect(ep.solved).toBe(true);
    expect(ep.turns.map((t) => t.action)).toEqual(['run', 'submit']);
  });

  it('reports each error kind as feedback and pays no ranOk', async () => {
    const ep = new Episode(task);
    const r = await turn(ep, 'x>1', RUN); // a boolean: a non-number result
    expect(r).toBeCloseTo(-w.turnCost, 10);
    expect(renderTokens(ep.tokens.slice(-3))).toBe('got err:output <sep>');
    expect(ep.turns[0]?.error).toBe('output');
    await turn(ep, 'x%0', RUN); // NaN
    expect(ep.turns[1]?.error).toBe('output');
  });

  it('ends with the no-submit penalty when out of turns', async () => {
    const ep = new Episode(task);
    for (let i = 0; i < DEFAULT_ENV_CONFIG.maxTurns; i++) await turn(ep, 'x', RUN);
    expect(ep.done).toBe(true);
    expect(ep.stop).toBe('turns');
    expect(ep.parts.noSubmit).toBe(-w.noSubmit);
    expect(ep.parts.total).toBeCloseTo(3 * (w.ranOk - w.turnCost) - w.noSubmit, 10);
    const last = ep.owned.lastIndexOf(1);
    expect(ep.tokens[last]).toBe(RUN);
    expect(ep.rewards[last]).toBeCloseTo(w.ranOk - w.turnCost - w.noSubmit, 10);
    await expect(ep.step(SUBMIT, sandbox)).rejects.toThrow(/finished/);
  });

  it('can forbid <run> on the last turn', async () => {
    const config: EnvConfig = { ...DEFAULT_ENV_CONFIG, maxTurns: 1, allowRunOnLastTurn: false };
    const ep = new Episode(task, config);
    await ep.step(tokenId('x'), sandbox);
    expect(ep.legalTokens()).toContain(SUBMIT);
    expect(ep.legalTokens()).not.toContain(RUN);
    await expect(ep.step(RUN, sandbox)).rejects.toThrow(/not legal/);
  });

  it('ends a turn within its token budget and the episode within the context', async () => {
    const config: EnvConfig = { ...DEFAULT_ENV_CONFIG, maxTokensPerTurn: 4, contextLength: 24, maxTurns: 10 };
    const ep = new Episode(task, config);
    // Greedily pick '(' whenever legal: the mask must still force the turn to close in 4 tokens.
    let n = 0;
    while (!ep.done) {
      const legal = ep.legalTokens();
      const open = tokenId('(');
      const pick = legal.includes(open) ? open : legal.includes(RUN) ? RUN : (legal[legal.length - 1] ?? RUN);
      await ep.step(pick, sandbox);
      n += 1;
      expect(n).toBeLessThan(40);
    }
    expect(ep.stop).toBe('context');
    expect(ep.tokens.length).toBeLessThanOrEqual(24);
    for (const t of ep.turns) expect(t.program.length).toBeLessThanOrEqual(3);
    expect(ep.parts.noSubmit).toBe(-w.noSubmit);
  });

  it('shows only the examples that fit, and refuses a task whose first example cannot fit', () => {
    const many: Task = {
      ...task,
      examples: Array.from({ length: 20 }, (_, i) => ({ input: i, output: 2 * i + 1 })),
    };
    const ep = new Episode(many);
    expect(ep.shown.length).toBeLessThan(20);
    expect(ep.tokens.length).toBeLessThanOrEqual(64 - 12);
    expect(() => new Episode(task, { ...DEFAULT_ENV_CONFIG, contextLength: 7 })).toThrow(/no room/);
  });
});
