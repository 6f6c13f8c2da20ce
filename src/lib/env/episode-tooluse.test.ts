import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QuickJSSandbox } from '../sandbox/quickjs';
import { createNodeQuickJS } from '../sandbox/quickjs-node';
import { TOOLUSE_ENV_CONFIG, TOOLUSE_REWARD, validateEnvConfig } from './config';
import { Episode } from './episode';
import type { Task } from './suite';
import { parseTestReport } from './test-report';
import { renderTokens, sourceToTokens } from './tokenizer';
import { RUN, SEP, SUBMIT, tokenId } from './vocab';

let sandbox: QuickJSSandbox;
beforeAll(async () => {
  sandbox = await createNodeQuickJS();
});
afterAll(() => sandbox.dispose());

const at = (xs: number[]) => xs.map((x) => ({ input: x, output: 3 * x }));

/** `3*x`, shown only as f(1) = 3 (which `x+2`, `2*x+1` and `3` fit as well). */
const task: Task = {
  id: 'tool:3x',
  level: 'easy',
  kind: 'tooluse',
  examples: at([1]),
  tests: at([0, 2, 4]),
  hidden: at([5, 10]),
};

async function turn(ep: Episode, src: string, control: number): Promise<number> {
  for (const t of sourceToTokens(src)) await ep.step(tokenId(t), sandbox);
  return (await ep.step(control, sandbox)).reward;
}

/** The feedback after the last `<run>`: from the token after it to the next `<sep>`. */
function lastFeedback(ep: Episode): number[] {
  const start = ep.tokens.lastIndexOf(RUN) + 1;
  return ep.tokens.slice(start, ep.tokens.indexOf(SEP, start) + 1);
}

const w = TOOLUSE_REWARD;
/** The tool-use env with a deadline a loaded machine does not trip (the default is 50 ms). */
const env = { ...TOOLUSE_ENV_CONFIG, limits: { deadlineMs: 2000 } };

describe('tool-use episode', () => {
  it('shows the one example, and a run answers with a test report on the tests', async () => {
    const ep = new Episode(task, env);
    expect(renderTokens(ep.tokens)).toBe('<bos> f( 1 )= 3 <sep>');
    const r = await turn(ep, 'x+2', RUN);
    expect(renderTokens(lastFeedback(ep))).toBe('pass 0 of 3 ; f( 0 )= 0 got 2 ; f( 2 )= 6 got 4 <sep>');
    expect(ep.owned.slice(-lastFeedback(ep).length).every((o) => o === 0)).toBe(true);
    expect(r).toBeCloseTo(-w.turnCost, 10);
    expect(ep.turns[0]).toMatchObject({ action: 'run', testsPassed: 0, outputs: [2, 4, 6] });
    expect(ep.runs).toBe(1);
    expect(ep.done).toBe(false);
  });

  it('pays a run-then-right-submit episode more than a wrong submit, less the turn it took', async () => {
    const run = new Episode(task, env);
    await turn(run, 'x+2', RUN);
    await turn(run, '3*x', SUBMIT);
    expect(run.solved).toBe(true);
    expect(run.parts.turnCost).toBeCloseTo(-2 * w.turnCost, 10);
    expect(run.parts.total).toBeCloseTo(w.pass + w.closeness - 2 * w.turnCost, 10);
    expect(run.runs).toBe(1);

    const guess = new Episode(task, env);
    await turn(guess, 'x+2', SUBMIT);
    expect(guess.solved).toBe(false);
    expect(guess.parts.pass).toBe(0);
    expect(guess.parts.turnCost).toBeCloseTo(-w.turnCost, 10);
    expect(run.parts.total - guess.parts.total).toBeGreaterThan(0.9);

    // A right guess without a run saves exactly the run's turn cost.
    const lucky = new Episode(task, env);
    await turn(lucky, '3*x', SUBMIT);
    expect(lucky.parts.total - run.parts.total).toBeCloseTo(w.turnCost, 10);
  });

  it('reports passing runs and errors, and pays nothing for a run as such', async () => {
    const ep = new Episode(task, env);
    await turn(ep, 'x*3', RUN);
    expect(renderTokens(lastFeedback(ep))).toBe('pass 3 of 3 <sep>');
    await turn(ep, 'x%0', RUN);
    expect(renderTokens(lastFeedback(ep))).toBe('pass 0 of 3 err:output <sep>');
    expect(ep.turns.map((t) => t.testsPassed)).toEqual([3, 0]);
    expect(ep.parts.ranOk).toBe(0);
    expect(ep.parts.turnCost).toBeCloseTo(-2 * w.turnCost, 10);
  });

  it('shows fewer failing tests when the context has no room for them, the counts always', async () => {
    const config = { ...env, contextLength: 30, maxTokensPerTurn: 8 };
    validateEnvConfig(config);
    const ep = new Episode(task, config);
    await turn(ep, 'x+2', RUN); // 6 + 4 tokens, then a report of 5 + 9 + 9 would leave no room
    const report = parseTestReport(lastFeedback(ep));
    expect(report.passed).toBe(0);
    expect(report.total).toBe(3);
    expect(report.failures).toEqual([{ input: 0, expected: 0, output: 2 }]);
    expect(ep.tokens.length).toBeLessThanOrEqual(config.contextLength - 2);
  });

  it('shows as many failing tests as the config asks', async () => {
    const ep = new Episode(task, { ...env, reportFailures: 0 });
    await turn(ep, 'x+2', RUN);
    expect(renderTokens(lastFeedback(ep))).toBe('pass 0 of 3 <sep>');
    expect(() => validateEnvConfig({ ...TOOLUSE_ENV_CONFIG, reportFailures: 9 })).toThrow(
      /reportFailures must be an integer from 0 to 4, got 9/,
    );
  });

  it('ends without a submit after its turns, paying the penalty', async () => {
    const ep = new Episode(task, env);
    for (let i = 0; i < TOOLUSE_ENV_CONFIG.maxTurns; i++) await turn(ep, '3*x', RUN);
    expect(ep.done).toBe(true);
    expect(ep.stop).toBe('turns');
    expect(ep.runs).toBe(4);
    expect(ep.parts.noSubmit).toBe(-w.noSubmit);
  });

  it('ends on the context when not even the counts of a report fit', async () => {
    const ep = new Episode(task, env);
    // Each run of `x+9` fails every test: 4 + 20 tokens a turn, and 64 hold two of them.
    await turn(ep, 'x+9', RUN);
    await turn(ep, 'x+9', RUN);
    expect(ep.tokens).toHaveLength(54);
    expect(ep.done).toBe(false);
    await turn(ep, 'x+9', RUN);
    expect(ep.stop).toBe('context');
    expect(ep.parts.noSubmit).toBe(-w.noSubmit);
  });
});

describe('the automatic first run (autoRun)', () => {
  const auto = { ...env, autoRun: true };

  it('lets the first turn end only with <run>, marks that run automatic, and then allows a submit', async () => {
    const ep = new Episode(task, auto);
    for (const t of sourceToTokens('x+2')) await ep.step(tokenId(t), sandbox);
    expect(ep.legalTokens()).toContain(RUN);
    expect(ep.legalTokens()).not.toContain(SUBMIT);
    await ep.step(RUN, sandbox);
    expect(ep.turns[0]).toMatchObject({ action: 'run', auto: true, testsPassed: 0 });
    expect(ep.turns[0]?.report).toEqual(parseTestReport(lastFeedback(ep)));
    for (const t of sourceToTokens('3*x')) await ep.step(tokenId(t), sandbox);
    expect(ep.legalTokens()).toContain(SUBMIT);
    await ep.step(SUBMIT, sandbox);
    expect(ep.solved).toBe(true);
    expect([ep.runs, ep.policyRuns]).toEqual([1, 0]);
  });

  it('leaves a later run the policy’s own, and a one-turn episode a plain submit', async () => {
    const ep = new Episode(task, auto);
    await turn(ep, 'x+2', RUN);
    await turn(ep, '3', RUN);
    expect(ep.turns[1]?.auto).toBeUndefined();
    expect(ep.policyRuns).toBe(1);
    const one = new Episode(task, { ...auto, maxTurns: 1, allowRunOnLastTurn: false });
    for (const t of sourceToTokens('3*x')) await one.step(tokenId(t), sandbox);
    expect(one.legalTokens()).toContain(SUBMIT);
  });

  it('does not change an examples task', async () => {
    const plain: Task = { id: 'e', level: 'easy', examples: at([1, 2]), hidden: at([5]) };
    const ep = new Episode(plain, auto);
    for (const t of sourceToTokens('3*x')) await ep.step(tokenId(t), sandbox);
    expect(ep.legalTokens()).toContain(SUBMIT);
  });

  it('is refused when not a flag', () => {
    expect(() => validateEnvConfig({ ...auto, autoRun: 1 as unknown as boolean })).toThrow(
      'env autoRun must be true or false, got 1',
    );
  });
});

describe('a start near the goal (Task.opening)', () => {
  it('begins at the revise turn: the first program run and its report, none of it the policy’s', async () => {
    const opened: Task = { ...task, opening: { program: 'x+2', outputs: [2, 4, 6] } };
    const ep = new Episode(opened, env);
    expect(renderTokens(ep.tokens)).toBe(
      '<bos> f( 1 )= 3 <sep> x + 2 <run> pass 0 of 3 ; f( 0 )= 0 got 2 ; f( 2 )= 6 got 4 <sep>',
    );
    expect(ep.owned.every((o) => o === 0)).toBe(true);
    expect(ep.turns[0]).toMatchObject({ action: 'run', auto: true, testsPassed: 0 });
    expect(ep.policyRuns).toBe(0);
    await turn(ep, '3*x', SUBMIT);
    expect(ep.solved).toBe(true);
    expect(ep.parts.turnCost).toBeCloseTo(-2 * w.turnCost, 10);
  });

  it('is refused on an examples task or without an output per test', () => {
    expect(
      () => new Episode({ ...task, kind: undefined, opening: { program: '3', outputs: [3, 3, 3] } }, env),
    ).toThrow(/an opening needs a tool-use task/);
    expect(() => new Episode({ ...task, opening: { program: '3', outputs: [3] } }, env)).toThrow(
      /an output per test/,
    );
  });
});
