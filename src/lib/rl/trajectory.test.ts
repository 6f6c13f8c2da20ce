import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEpisodes, type TokenAgent } from '../env/evaluate';
import type { Episode } from '../env/episode';
import type { Task } from '../env/suite';
import { sourceToTokens } from '../env/tokenizer';
import { PAD, SUBMIT, tokenId } from '../env/vocab';
import type { QuickJSSandbox } from '../sandbox/quickjs';
import { createNodeQuickJS } from '../sandbox/quickjs-node';
import { gaeAdvantages, hasVoidTurn, trajectoryBatch, TrajectoryRecorder } from './trajectory';

let sandbox: QuickJSSandbox;
beforeAll(async () => {
  sandbox = await createNodeQuickJS();
});
afterAll(() => sandbox.dispose());

const task: Task = {
  id: 'plus-one',
  level: 'easy',
  examples: [{ input: 1, output: 2 }],
  hidden: [{ input: 5, output: 6 }],
};

/** Writes `x+1` then submits, reporting log-prob −(position) so the test can check alignment. */
class Scripted implements TokenAgent {
  readonly name = 'scripted';
  lastLogProbs: number[] = [];
  choose(episodes: readonly Episode[]): number[] {
    const program = sourceToTokens('x+1');
    this.lastLogProbs = episodes.map((e) => -e.programText.length - 1);
    return episodes.map((e) =>
      e.programText.length < 3 ? tokenId(program[e.programText.length] ?? 'x') : SUBMIT,
    );
  }
}

describe('trajectories', () => {
  it('record behaviour log-probs and versions on the policy tokens only', async () => {
    const rec = new TrajectoryRecorder(7);
    const [ep] = await runEpisodes([task], new Scripted(), sandbox, undefined, rec.onToken);
    if (!ep) throw new Error('no episode');
    const tr = rec.trajectory(ep, 'g');
    const p = ep.promptLength;
    expect(tr.owned.slice(p)).toEqual([1, 1, 1, 1]);
    expect(tr.logProbs.slice(p)).toEqual([-1, -2, -3, -4]);
    expect(tr.logProbs.slice(0, p).every((x) => x === 0)).toBe(true);
    expect(tr.versions.slice(p)).toEqual([7, 7, 7, 7]);
    expect(tr.versions[0]).toBe(-1);
    expect(tr.solved).toBe(true);
    expect(tr.runs).toBe(0);
    expect(tr.turns).toBe(1);
    expect(tr.return).toBeCloseTo(ep.parts.total, 10);
  });

  it('read the legal masks of a trajectory stored with a smaller vocabulary', async () => {
    const rec = new TrajectoryRecorder(0);
    const [ep] = await runEpisodes([task], new Scripted(), sandbox, undefined, rec.onToken);
    if (!ep) throw new Error('no episode');
    const tr = rec.trajectory(ep, 'g');
    const V = tr.legal.length / tr.tokens.length;
    // The rows as a vocabulary two tokens smaller stored them (its tokens are the first V − 2).
    const W = V - 2;
    const old = new Uint8Array(tr.tokens.length * W);
    for (let t = 0; t < tr.tokens.length; t++) old.set(tr.legal.subarray(t * V, t * V + W), t * W);
    const now = trajectoryBatch([tr], [1], 16);
    const then = trajectoryBatch([{ ...tr, legal: old }], [1], 16);
    expect(then.vocab).toBe(V);
    expect(Array.from(then.legal ?? [])).toEqual(Array.from(now.legal ?? []));
  });

  it('become a batch that trains each position on the next token, masked to the policy', async () => {
    const rec = new TrajectoryRecorder(0);
    const eps = await runEpisodes([task, task], new Scripted(), sandbox, undefined, rec.onToken);
    const trajs = eps.map((e) => rec.trajectory(e, 'g'));
    const T = 16;
    const b = trajectoryBatch(trajs, [0.5, -0.5], T);
    const first = trajs[0];
    if (!first) throw new Error('no trajectory');
    const p = eps[0]?.promptLength ?? 0;
    expect(b.batch).toBe(2);
    // Position p − 1 (the <sep>) predicts the first program token 'x'.
    expect(b.tokens[p - 1]).toBe(first.tokens[p - 1]);
    expect(b.actions[p - 1]).toBe(tokenId('x'));
    expect(Array.from(b.mask.slice(0, T))).toEqual(
      Array.from({ length: T }, (_, t) => (t >= p - 1 && t < p + 3 ? 1 : 0)),
    );
    expect(b.advantages[p - 1]).toBe(0.5);
    expect(b.advantages[T + p - 1]).toBe(-0.5);
    expect(b.advantages[0]).toBe(0);
    expect(b.tokens[T - 1]).toBe(PAD);
    expect(b.returns[0]).toBeCloseTo(first.return, 6);
    // The behaviour log-prob and legal mask of token p sit at position p − 1, which predicts it.
    expect(b.behavLogp?.[p - 1]).toBe(first.logProbs[p]);
    const V = b.vocab ?? 0;
    const maskAt = (pos: number) => Array.from(b.legal?.subarray(pos * V, (pos + 1) * V) ?? []);
    expect(maskAt(p - 1)[tokenId('x')]).toBe(1);
    expect(maskAt(p - 1)[SUBMIT]).toBe(0); // nothing written yet: cannot submit
    expect(maskAt(p + 2)[SUBMIT]).toBe(1); // after x+1
    expect(maskAt(0).every((m) => m === 0)).toBe(true);
    expect(() => trajectoryBatch(trajs, [0, 0], 4)).toThrow(/longer than the batch length/);
    // Row weights (prioritized replay) fill every position of their row; all 1 gives none.
    expect(b.weights).toBeUndefined();
    expect(trajectoryBatch(trajs, [0.5, -0.5], T, [1, 1]).weights).toBeUndefined();
    const weighted = trajectoryBatch(trajs, [0.5, -0.5], T, [0.25, 1]).weights;
    expect(Array.from(weighted ?? [])).toEqual([...Array<number>(T).fill(0.25), ...Array<number>(T).fill(1)]);
    expect(() => trajectoryBatch(trajs, [0.5, -0.5], T, [0.5])).toThrow(
      '1 row weights for a batch of 2 rows',
    );
  });
});

describe('void turns', () => {
  const turn = (error?: 'runtime' | 'internal') => ({
    action: 'run' as const,
    program: 'x',
    reward: 0,
    ...(error ? { error } : {}),
  });
  it('are a run that filled the context or an internal sandbox failure, not a failing program', () => {
    expect(hasVoidTurn({ stop: 'context', turns: [turn()] })).toBe(true);
    expect(hasVoidTurn({ stop: 'submit', turns: [turn('internal')] })).toBe(true);
    expect(hasVoidTurn({ stop: 'submit', turns: [turn('runtime')] })).toBe(false);
    expect(hasVoidTurn({ stop: 'turns', turns: [turn(), turn()] })).toBe(false);
  });
});

describe('per-token GAE advantages', () => {
  it('run GAE over the policy tokens only, normalise over the batch, and land on the predicting positions', () => {
    const base = {
      taskId: 't',
      level: 'easy' as const,
      group: 't',
      logProbs: [0, 0, 0, 0, 0],
      versions: [-1, 0, -1, 0, 0],
      legal: new Uint8Array(5 * 53),
      solved: false,
      turns: 1,
      parts: { pass: 0, ranOk: 0, closeness: 0, turnCost: 0, noSubmit: 0, total: 1 },
    };
    // Policy tokens at 1, 3, 4 (2 is feedback); reward 1 on the last; values 0.5, 0.5, 0.5.
    const tr = {
      ...base,
      tokens: [1, 11, 30, 12, 3],
      owned: [0, 1, 0, 1, 1],
      rewards: [0, 0, 0, 0, 1],
      values: [0, 0.5, 0, 0.5, 0.5],
      return: 1,
    };
    const [g] = gaeAdvantages([tr], 1, 1);
    if (!g) throw new Error('no advantages');
    // λ = γ = 1: A_t = R − V_t = 0.5 at every policy token → all equal → normalised to 0.
    expect(g.returns).toEqual([0, 1, 0, 1, 1]);
    expect(g.advantages.every((a) => Math.abs(a) < 1e-6)).toBe(true);
    const worse = { ...tr, rewards: [0, 0, 0, 0, 0], return: 0 };
    const both = gaeAdvantages([tr, worse], 1, 1);
    expect(both[0]?.advantages[4]).toBeCloseTo(1, 6); // +0.5 vs −0.5, normalised to ±1
    expect(both[1]?.advantages[4]).toBeCloseTo(-1, 6);
    expect(both[0]?.advantages[2]).toBe(0); // feedback token
    const b = trajectoryBatch([tr, worse], both, 8);
    expect(b.advantages[3]).toBeCloseTo(1, 6); // position 3 predicts token 4
    expect(b.returns[3]).toBe(1);
    expect(b.mask[1]).toBe(0); // position 1 predicts the feedback token
  });
});
