import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QuickJSSandbox } from '../sandbox/quickjs';
import { createNodeQuickJS } from '../sandbox/quickjs-node';
import { DEFAULT_REWARD, TOOLUSE_ENV_CONFIG } from './config';
import {
  agentFigures,
  bruteForce,
  evaluateAgents,
  oneTurn,
  playEpisodes,
  RandomAgent,
  summarize,
  type EvalRow,
  type EvalTask,
  type TokenAgent,
} from './evaluate';
import { generateTasks } from './families';
import { generalisationTasks } from './generalisation';
import type { Episode } from './episode';
import { sourceToTokens } from './tokenizer';
import { generateToolUseTasks } from './tooluse';
import { RUN, SUBMIT, tokenId } from './vocab';

let sandbox: QuickJSSandbox;
beforeAll(async () => {
  sandbox = await createNodeQuickJS();
});
afterAll(() => sandbox.dispose());

const easy = generateTasks(1).filter((t) => t.level === 'easy');

/** An oracle that writes each task's target program: the upper bound every table should reach. */
class Oracle implements TokenAgent {
  readonly name = 'oracle';
  constructor(private readonly programs: Map<string, string>) {}
  choose(episodes: readonly Episode[]): number[] {
    return episodes.map((e) => {
      const target = sourceToTokens(this.programs.get(e.task.id) ?? '0');
      const written = e.programText.length;
      return written < target.length ? tokenId(target[written] ?? '0') : SUBMIT;
    });
  }
}

describe('evaluation', () => {
  it('plays every task, batched, and scores an oracle at success 1 with the full reward', async () => {
    const oracle = new Oracle(new Map(easy.map((t) => [t.id, t.program])));
    const progress: number[] = [];
    const eps = await playEpisodes(easy, oracle, sandbox, { batch: 7, onProgress: (d) => progress.push(d) });
    expect(eps).toHaveLength(easy.length);
    expect(progress[progress.length - 1]).toBe(easy.length);
    expect(eps.every((e) => e.solved && e.turns === 1)).toBe(true);
    const rows = summarize('oracle', 'greedy', eps);
    const all = rows.find((r) => r.split === 'train' && r.level === 'all');
    expect(all?.success).toBe(1);
    expect(all?.meanReward).toBeCloseTo(
      DEFAULT_REWARD.pass + DEFAULT_REWARD.ranOk + DEFAULT_REWARD.closeness - DEFAULT_REWARD.turnCost,
      10,
    );
    expect(rows.map((r) => `${r.split}/${r.level}`)).toEqual([
      'train/all',
      'train/easy',
      'heldOut/all',
      'heldOut/easy',
    ]);
    // What it was paid for: the parts' means add up to the mean reward.
    const p = all?.meanParts;
    expect(p?.pass).toBe(1);
    expect(p?.noSubmit).toBe(0);
    const sum =
      (p?.pass ?? 0) + (p?.ranOk ?? 0) + (p?.closeness ?? 0) + (p?.turnCost ?? 0) + (p?.noSubmit ?? 0);
    expect(sum).toBeCloseTo(all?.meanReward ?? NaN, 10);
  });

  it('random tokens rarely solve a task and are reproducible by seed', async () => {
    const tasks = easy.slice(0, 12);
    const a = await playEpisodes(tasks, new RandomAgent(5), sandbox, { samples: 2 });
    const b = await playEpisodes(tasks, new RandomAgent(5), sandbox, { samples: 2 });
    expect(a).toEqual(b);
    expect(a).toHaveLength(24);
    const success = a.filter((e) => e.solved).length / a.length;
    expect(success).toBeLessThan(0.5);
    expect(a.every((e) => e.turns >= 1 && e.turns <= 3)).toBe(true);
  });

  it('brute force finds every easy task within the programs of up to 3 tokens and counts its runs', async () => {
    const tasks: EvalTask[] = easy.slice(0, 10);
    const eps = await bruteForce(tasks, sandbox);
    for (const [i, e] of eps.entries()) {
      expect(e.solved, tasks[i]?.id).toBe(true);
      expect(e.runs).toBeGreaterThan(0);
      expect(e.runs).toBeLessThanOrEqual(1839 + 1);
    }
    // A constant task is found among the first 11 programs; x+7 needs more.
    const constant: EvalTask = {
      id: 'c',
      level: 'easy',
      heldOut: true,
      examples: [1, 2, 4].map((x) => ({ input: x, output: 3 })),
      hidden: [{ input: 9, output: 3 }],
    };
    const [c] = await bruteForce([constant], sandbox);
    expect(c?.runs).toBe(4 + 1); // '0' '1' '2' '3', then the submit
  });

  it('brute force gives up at its cap, charging the cap', async () => {
    const square = (x: number) => ({ input: x, output: x * x + x });
    const hard: EvalTask = {
      id: 'x*x+x',
      level: 'hard',
      heldOut: false,
      examples: [1, 2, 4].map(square),
      hidden: [3, 5].map(square),
    };
    const [e] = await bruteForce([hard], sandbox, { maxRuns: 50 });
    expect(e).toMatchObject({ solved: false, runs: 50, reward: -DEFAULT_REWARD.noSubmit });
  });
});

describe('evaluation table', () => {
  it('evaluates token agents greedy and sampled, brute force once, and reduces rows to bench figures', async () => {
    const tasks = easy.slice(0, 8);
    const progress: string[] = [];
    const finished: EvalRow[][] = [];
    const rows = await evaluateAgents(
      tasks,
      sandbox,
      [
        { name: 'random', kind: 'tokens', sampled: new RandomAgent(1) },
        {
          name: 'oracle',
          kind: 'tokens',
          greedy: new Oracle(new Map(tasks.map((t) => [t.id, t.program]))),
          sampled: new RandomAgent(2),
        },
        { name: 'bruteforce', kind: 'bruteforce' },
      ],
      {
        samples: 2,
        onProgress: (p) => {
          progress.push(`${p.agent}/${p.mode}`);
          if (p.rows) finished.push(p.rows);
        },
      },
    );
    // The rows so far come as each agent and mode finishes (a stopped evaluation keeps them): the
    // last of them is the whole table, each earlier one a start of it.
    expect(finished).toHaveLength(4);
    expect(finished.at(-1)).toEqual(rows);
    for (const part of finished) expect(rows.slice(0, part.length)).toEqual(part);
    expect(new Set(finished[0]?.map((r) => r.agent))).toEqual(new Set(['random']));
    expect(new Set(progress)).toEqual(
      new Set(['random/sampled', 'oracle/greedy', 'oracle/sampled', 'bruteforce/sampled']),
    );
    const sampled = rows.filter((r) => r.agent === 'random' && r.level === 'all');
    expect(sampled.reduce((s, r) => s + r.episodes, 0)).toBe(16);
    const oracle = agentFigures(rows, 'oracle');
    const heldOut = tasks.filter((t) => t.heldOut).length;
    expect(oracle.successTrain).toBe(tasks.length > heldOut ? 1 : null);
    expect(oracle.meanTurns).toBe(1);
    const brute = agentFigures(rows, 'bruteforce');
    expect(brute.sandboxRunsPerTask).toBeGreaterThan(1);
    expect(agentFigures(rows, 'random').sandboxRunsPerTask).toBeUndefined();
  });

  it('reports the generalisation suite as a split of its own, for an oracle and brute force', async () => {
    const suite = generateTasks(1);
    const general = generalisationTasks(suite).filter((t) => t.level === 'easy');
    const tasks: EvalTask[] = [...easy.slice(0, 4), ...general];
    const oracle = new Oracle(new Map([...easy, ...general].map((t) => [t.id, t.program])));
    const rows = await evaluateAgents(tasks, sandbox, [
      { name: 'oracle', kind: 'tokens', greedy: oracle, sampled: oracle },
      { name: 'bruteforce', kind: 'bruteforce', maxRuns: 400 },
    ]);
    const row = rows.find((r) => r.agent === 'oracle' && r.split === 'generalisation' && r.level === 'all');
    expect(row?.episodes).toBe(general.length);
    expect(row?.success).toBe(1);
    // The held-out split counts no generalisation task.
    expect(rows.some((r) => r.agent === 'oracle' && r.split === 'heldOut' && r.episodes > 4)).toBe(false);
    expect(agentFigures(rows, 'oracle').successGeneralisation).toBe(1);
    const brute = agentFigures(rows, 'bruteforce').successGeneralisation;
    expect(brute).not.toBeNull();
    expect(agentFigures(summarize('none', 'greedy', []), 'none').successGeneralisation).toBeNull();
  });

  it('reports, for tool-use tasks, how many solved episodes ran a program, and success at one turn', async () => {
    const tools = generateToolUseTasks(1).filter((t) => t.level === 'easy' && !t.heldOut);
    const [constant, other] = [
      tools.find((t) => t.family === 'constant'),
      tools.find((t) => t.family !== 'constant'),
    ];
    if (!constant || !other) throw new Error('no easy tool-use tasks');
    const target = new Map([constant, other].map((t) => [t.id, t.program]));
    /** Runs the shown output as a constant, then submits the target program: runs, then right. */
    const runner: TokenAgent = {
      name: 'runner',
      choose: (episodes) =>
        episodes.map((e) => {
          const shown = sourceToTokens(String(e.task.examples[0]?.output ?? 0));
          const first = e.turns.length === 0 && e.config.maxTurns > 1;
          const program = first ? shown : sourceToTokens(target.get(e.task.id) ?? '0');
          const n = e.programText.length;
          return n < program.length ? tokenId(program[n] ?? '0') : first ? RUN : SUBMIT;
        }),
    };
    const rows = await evaluateAgents(
      [constant, other],
      sandbox,
      [
        { name: 'runner', kind: 'tokens', greedy: runner, sampled: runner },
        { name: 'bruteforce', kind: 'bruteforce', maxRuns: 50 },
      ],
      { config: TOOLUSE_ENV_CONFIG, samples: 0 },
    );
    const all = rows.find((r) => r.agent === 'runner' && r.split === 'train' && r.level === 'all');
    expect(all?.success).toBe(1);
    expect(all?.meanTurns).toBe(2);
    // Every solved episode ran a program first; at one turn it submits its target at once.
    expect(all?.toolUse).toEqual({
      solvedWithRun: 1,
      successOneTurn: 1,
      runFraction: 1,
      reviseRate: 1, // the other task's run failed, and the next program passed
      copyRate: 0,
    });
    // Brute force is not played again at one turn; no episode of it solved with a run of its own.
    const brute = rows.find((r) => r.agent === 'bruteforce' && r.level === 'all');
    expect(brute?.toolUse?.successOneTurn).toBeUndefined();
    // Examples tasks have no tool-use figures.
    const plain = await evaluateAgents(
      easy.slice(0, 2),
      sandbox,
      [{ name: 'runner', kind: 'tokens', greedy: runner, sampled: runner }],
      { samples: 0 },
    );
    expect(plain.every((r) => r.toolUse === undefined)).toBe(true);
  });

  it('gives no run share when nothing was solved, and one turn allows no run', () => {
    const summary = (solved: boolean, usedRun: boolean) => ({
      taskId: 't',
      level: 'easy' as const,
      heldOut: false,
      solved,
      turns: usedRun ? 2 : 1,
      reward: 0,
      parts: { pass: 0, ranOk: 0, closeness: 0, turnCost: 0, noSubmit: 0, total: 0 },
      runs: 1,
      toolUse: { usedRun, policyRan: usedRun, tries: 0, fixes: 0, copies: 0 },
    });
    const [none] = summarize('a', 'greedy', [summary(false, true)]);
    expect(none?.toolUse).toEqual({ solvedWithRun: null, runFraction: 1, reviseRate: null, copyRate: null });
    const [half] = summarize('a', 'greedy', [
      summary(true, true),
      summary(true, false),
      summary(false, true),
    ]);
    expect(half?.toolUse?.solvedWithRun).toBe(0.5);
    expect(half?.toolUse?.runFraction).toBeCloseTo(2 / 3, 10);
    expect(oneTurn(TOOLUSE_ENV_CONFIG)).toMatchObject({ maxTurns: 1, allowRunOnLastTurn: false });
  });
});
