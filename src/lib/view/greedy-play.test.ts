import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEpisodes, type EvalTask, type TokenAgent } from '../env/evaluate';
import { sourceToTokens } from '../env/tokenizer';
import { RUN, SUBMIT, tokenId } from '../env/vocab';
import { TrajectoryRecorder } from '../rl/trajectory';
import type { GreedyEpisode } from '../run/evaluations';
import type { QuickJSSandbox } from '../sandbox/quickjs';
import { createNodeQuickJS } from '../sandbox/quickjs-node';
import { defaultTask, playedSummary, replayEpisode, taskGroups, versionChoices } from './greedy-play';
import { ProgramFeed, replayMark } from './program-feed';

let sandbox: QuickJSSandbox;
beforeAll(async () => {
  sandbox = await createNodeQuickJS();
});
afterAll(() => sandbox.dispose());

const task = (
  id: string,
  split: 'train' | 'heldOut' | 'generalisation',
  level: EvalTask['level'] = 'easy',
): EvalTask => ({
  id,
  level,
  examples: [
    { input: 1, output: 3 },
    { input: 2, output: 5 },
  ],
  hidden: [
    { input: 0, output: 1 },
    { input: 3, output: 7 },
  ],
  heldOut: split !== 'train',
  ...(split === 'generalisation' ? { generalisation: true } : {}),
});

/** Writes the given programs in turn, each ended by its control token (a greedy policy's stand-in). */
function scripted(turns: { program: string; control: number }[]): TokenAgent {
  const queue = turns.flatMap((t) => [...sourceToTokens(t.program).map(tokenId), t.control]);
  return { name: 'scripted', choose: (episodes) => episodes.map(() => queue.shift() ?? SUBMIT) };
}

/** One episode played as the worker's `playGreedy` plays it, by version `version`. */
async function greedyEpisode(t: EvalTask, version: number): Promise<GreedyEpisode> {
  const recorder = new TrajectoryRecorder(version);
  const agent = scripted([
    { program: 'x*2', control: RUN },
    { program: 'x*2+1', control: SUBMIT },
  ]);
  const [ep] = await runEpisodes([t], agent, sandbox, undefined, recorder.onToken);
  if (!ep) throw new Error('no episode');
  return { runId: 'run-p', version, task: t, trajectory: recorder.trajectory(ep, 'greedy'), turns: ep.turns };
}

describe('the choice lists', () => {
  const tasks = [
    task('train-a', 'train'),
    task('held-a', 'heldOut', 'medium'),
    task('train-b', 'train'),
    task('gen-a', 'generalisation'),
  ];

  it('groups the tasks by split, in that order, each labelled with its level', () => {
    const groups = taskGroups(tasks);
    expect(groups.map((g) => [g.split, g.label])).toEqual([
      ['train', 'Training tasks'],
      ['heldOut', 'Held-out tasks'],
      ['generalisation', 'Generalisation tasks'],
    ]);
    expect(groups[0]?.tasks).toEqual([
      { id: 'train-a', label: 'train-a (easy)' },
      { id: 'train-b', label: 'train-b (easy)' },
    ]);
    expect(groups[1]?.tasks).toEqual([{ id: 'held-a', label: 'held-a (medium)' }]);
  });

  it('leaves out an empty split and chooses a held-out task first', () => {
    expect(taskGroups([task('train-a', 'train')]).map((g) => g.split)).toEqual(['train']);
    expect(defaultTask(taskGroups(tasks))).toBe('held-a');
    expect(defaultTask(taskGroups([task('train-a', 'train')]))).toBe('train-a');
    expect(defaultTask([])).toBe('');
  });

  it('lists the stored versions newest first, once each', () => {
    expect(versionChoices([0, 10, 12, 10, 11])).toEqual([
      { version: 12, label: 'v12' },
      { version: 11, label: 'v11' },
      { version: 10, label: 'v10' },
      { version: 0, label: 'v0' },
    ]);
    expect(versionChoices([])).toEqual([]);
  });
});

describe('a greedy episode as a feed entry', () => {
  it('shows its turns, answers and result, marked with its version and the task', async () => {
    const played = await greedyEpisode(task('held-a', 'heldOut'), 12);
    const e = replayEpisode(played, 3);
    expect(e.key).toBe('greedy:3');
    expect(e.replay).toEqual({ version: 12, split: 'heldOut' });
    expect(e.versions).toEqual([12]);
    expect(e.lane).toBe('evaluator');
    expect(e.turns.map((t) => [t.action, t.program])).toEqual([
      ['run', 'x*2'],
      ['submit', 'x*2+1'],
    ]);
    expect(e.turns[0]?.outputs).toEqual([2, 4]); // what the sandbox answered the run
    expect(e.turns[1]?.passed).toBe(2);
    expect(e.turns[1]?.revised).toBe(true);
    expect(e.solved).toBe(true);
    expect(e.reward).toBeCloseTo(played.trajectory.return, 10);
    expect(replayMark(e)).toBe('played greedily by v12 on held-a (held-out task)');
    expect(playedSummary(e)).toMatch(
      /^v12 on held-a: solved, reward \+\d\.\d\d, 2 turns; shown at the top of the feed\.$/,
    );
  });

  it('marks a generalisation task as such, and a run episode not at all', async () => {
    const e = replayEpisode(await greedyEpisode(task('gen-a', 'generalisation'), 4), 1);
    expect(replayMark(e)).toBe('played greedily by v4 on gen-a (generalisation task)');
    expect(replayMark({ name: 'x', replay: undefined })).toBe('');
  });

  it('joins the feed without counting as a run episode or teaching the best programs, at any level', async () => {
    const feed = new ProgramFeed();
    const e = replayEpisode(await greedyEpisode(task('held-a', 'heldOut'), 7), 1);
    feed.add([e]);
    expect(feed.seen).toBe(0);
    expect(feed.bestPrograms()).toEqual([]);
    expect(feed.list('hard').map((x) => x.key)).toEqual(['greedy:1']); // shown whatever the filter
    expect(feed.list('easy').map((x) => x.key)).toEqual(['greedy:1']);
  });
});
