import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOLUSE_ENV_CONFIG } from '../env/config';
import { Episode } from '../env/episode';
import type { Task } from '../env/suite';
import { sourceToTokens } from '../env/tokenizer';
import { RUN, SUBMIT, tokenId } from '../env/vocab';
import type { QuickJSSandbox } from '../sandbox/quickjs';
import { createNodeQuickJS } from '../sandbox/quickjs-node';
import type { Trajectory } from './trajectory';
import { turnAdvantages, turnsOf } from './turn-credit';

let sandbox: QuickJSSandbox;
beforeAll(async () => {
  sandbox = await createNodeQuickJS();
});
afterAll(() => sandbox.dispose());

const at = (xs: number[]) => xs.map((x) => ({ input: x, output: x + 3 }));
const task: Task = {
  id: 'tool:x+3',
  level: 'easy',
  kind: 'tooluse',
  examples: at([1]),
  tests: at([0, 2, 4, 6]),
  hidden: at([9, 10]),
};
const env = { ...TOOLUSE_ENV_CONFIG, limits: { deadlineMs: 2000 } };

/** An episode of `turns` ([program, control]) as a trajectory of `group`. */
async function played(turns: [string, number][], group = 'g'): Promise<Trajectory> {
  const ep = new Episode(task, env);
  for (const [program, control] of turns) {
    for (const t of sourceToTokens(program)) await ep.step(tokenId(t), sandbox);
    await ep.step(control, sandbox);
  }
  const n = ep.tokens.length;
  return {
    taskId: task.id,
    level: 'easy',
    group,
    tokens: [...ep.tokens],
    owned: [...ep.owned],
    rewards: [...ep.rewards],
    logProbs: new Array<number>(n).fill(0),
    values: new Array<number>(n).fill(0),
    versions: new Array<number>(n).fill(0),
    legal: new Uint8Array(0),
    solved: ep.solved,
    turns: ep.turns.length,
    return: ep.parts.total,
    parts: { ...ep.parts },
  };
}

/** The advantage a trajectory's k-th turn got (all its tokens share it). */
function turnAdvantage(tr: Trajectory, adv: readonly number[], k: number): number {
  const turn = turnsOf(tr)[k];
  if (!turn) throw new Error(`no turn ${k}`);
  const values = new Set(turn.positions.map((p) => adv[p]));
  expect(values.size).toBe(1);
  return [...values][0] ?? NaN;
}

describe('per-turn credit', () => {
  it('scores a run by the share of tests its report passed, and a submit by the hidden tests it passed', async () => {
    const tr = await played([
      ['x+1', RUN],
      ['x+3', SUBMIT],
    ]);
    expect(turnsOf(tr).map((t) => t.score)).toEqual([0, 1]);
    const part = await played([
      ['x>2?x+3:0', RUN],
      ['x+3', SUBMIT],
    ]);
    expect(turnsOf(part)[0]?.score).toBe(0.5); // passes at 4 and 6, fails at 0 and 2
  });

  it('credits a fix above a run that fixed nothing, within one task’s group', async () => {
    const fix = await played([
      ['x+1', RUN],
      ['x+3', SUBMIT],
    ]);
    const stay = await played([
      ['x+1', RUN],
      ['x+1', SUBMIT],
    ]);
    const adv = turnAdvantages([fix, stay], ['g', 'g'], 0.5);
    expect(turnAdvantage(fix, adv[0]?.advantages ?? [], 1)).toBeGreaterThan(
      turnAdvantage(stay, adv[1]?.advantages ?? [], 1),
    );
    // Equal first turns: their per-turn part is 0, only the outcome separates them.
    expect(turnAdvantage(fix, adv[0]?.advantages ?? [], 0)).toBeCloseTo(fix.return - stay.return, 10);
    // The policy's tokens only: the report and the observation get nothing.
    fix.owned.forEach((o, i) => {
      if (!o) expect(adv[0]?.advantages[i]).toBe(0);
    });
  });

  it('pays no improvement bonus to a first turn made worse on purpose', async () => {
    // Two episodes reach the same fix; one of them wrote a worse first program than its group's mean.
    const honest = await played([
      ['x>2?x+3:0', RUN],
      ['x+3', SUBMIT],
    ]);
    const sandbag = await played([
      ['0', RUN],
      ['x+3', SUBMIT],
    ]);
    const other = await played([
      ['x>2?x+3:0', RUN],
      ['x+3', SUBMIT],
    ]);
    const trajs = [honest, sandbag, other];
    const withBonus = turnAdvantages(trajs, ['g', 'g', 'g'], 2);
    const without = turnAdvantages(trajs, ['g', 'g', 'g'], 0);
    const gain = (k: number) =>
      turnAdvantage(trajs[k] as Trajectory, withBonus[k]?.advantages ?? [], 1) -
      turnAdvantage(trajs[k] as Trajectory, without[k]?.advantages ?? [], 1);
    // The honest episode's bonus is for improving on its own first turn (0.5 → 1 of the score).
    expect(gain(0)).toBeGreaterThan(0);
    // The sandbagger improves from 0, but only the part above its group's first-turn mean (0.5) pays.
    expect(gain(1)).toBeLessThanOrEqual(gain(0) + 1e-9);
  });

  it('keeps tasks apart: a group of one gets no baseline advantage', async () => {
    const a = await played(
      [
        ['x+3', RUN],
        ['x+3', SUBMIT],
      ],
      'a',
    );
    const adv = turnAdvantages([a], ['a'], 0.5);
    expect(adv[0]?.advantages.every((x) => x === 0)).toBe(true);
  });
});
