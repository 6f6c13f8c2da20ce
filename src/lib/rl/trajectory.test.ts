import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEpisodes, type TokenAgent } from '../env/evaluate';
import type { Episode } from '../env/episode';
import type { Task } from '../env/suite';
import { sourceToTokens } from '../env/tokenizer';
import { PAD, SUBMIT, tokenId } from '../env/vocab';
import type { QuickJSSandbox } from '../sandbox/quickjs';
import { createNodeQuickJS } from '../sandbox/quickjs-node';
import { trajectoryBatch, TrajectoryRecorder } from './trajectory';

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
    expect(tr.return).toBeCloseTo(ep.parts.total, 10);
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
  });
});
