import { describe, expect, it } from 'vitest';
import { DEFAULT_ENV_CONFIG } from '../env/config';
import type { TurnRecord } from '../env/episode';
import type { Level, Task } from '../env/suite';
import { testReport, testReportTokens } from '../env/test-report';
import { feedbackTokens, observationTokens } from '../env/tokenizer';
import { RUN, SUBMIT, tokenId } from '../env/vocab';
import type { PlayedGroup, RolloutJob } from '../pipeline/types';
import type { Trajectory } from '../rl/trajectory';
import {
  FeedAnnouncer,
  feedEpisodes,
  ProgramFeed,
  turnOutcome,
  versionColor,
  versionLegend,
  versionRange,
  type FeedEpisode,
  type FeedTurn,
} from './program-feed';

const TASK: Task = {
  id: 'double:2',
  level: 'easy',
  examples: [
    { input: 1, output: 2 },
    { input: 3, output: 6 },
  ],
  hidden: [
    { input: 5, output: 10 },
    { input: 7, output: 14 },
  ],
};

/** One turn as the policy writes it: its program (one version per character), and how it ends. */
interface Written {
  program: string;
  versions: number[];
  action: 'run' | 'submit';
  record: TurnRecord;
}

/** What the environment answers a run of the examples kind: the outputs (or the error) as tokens. */
const outputTokens = (t: Written): number[] =>
  feedbackTokens(t.record.outputs ? { outputs: t.record.outputs } : { error: 'syntax' });

/**
 * The trajectory and the sandbox's records of an episode that wrote `turns` on TASK; `answer`
 * gives the tokens the environment answers each run with.
 */
function played(
  turns: Written[],
  task: Task = TASK,
  answer: (t: Written) => number[] = outputTokens,
): { tr: Trajectory; records: TurnRecord[] } {
  const tokens = observationTokens(task.examples);
  const owned = tokens.map(() => 0);
  const versions = tokens.map(() => -1);
  const rewards = tokens.map(() => 0);
  for (const t of turns) {
    [...t.program].forEach((ch, i) => {
      tokens.push(tokenId(ch));
      owned.push(1);
      versions.push(t.versions[i] ?? -1);
      rewards.push(0);
    });
    tokens.push(t.action === 'run' ? RUN : SUBMIT);
    owned.push(1);
    versions.push(t.versions.at(-1) ?? -1);
    rewards.push(t.record.reward);
    if (t.action === 'run') {
      const fb = answer(t);
      tokens.push(...fb);
      for (const arr of [owned, rewards]) arr.push(...fb.map(() => 0));
      versions.push(...fb.map(() => -1));
    }
  }
  const last = turns.at(-1)?.record;
  const solved = last?.action === 'submit' && last.passed === task.hidden.length;
  const ret = turns.reduce((a, t) => a + t.record.reward, 0);
  const parts = { pass: 0, ranOk: 0, closeness: 0, turnCost: 0, noSubmit: 0, total: ret };
  const tr: Trajectory = {
    taskId: task.id,
    level: task.level,
    group: task.id,
    tokens,
    owned,
    rewards,
    logProbs: tokens.map(() => 0),
    values: tokens.map(() => 0),
    versions,
    legal: new Uint8Array(0),
    solved,
    turns: turns.length,
    return: ret,
    parts,
  };
  return { tr, records: turns.map((t) => t.record) };
}

function job(task: Task = TASK, jobId = 7): RolloutJob {
  return {
    jobId,
    runId: 'run',
    task,
    samples: 1,
    minVersion: 0,
    seqBase: 40,
    seed: 1,
    env: DEFAULT_ENV_CONFIG,
    relabelMaxAbs: 0,
    relabelMutations: 0,
    cls: 'normal',
    value: 0,
  };
}

function group(episodes: { tr: Trajectory; records: TurnRecord[] }[], seqBase = 40, jobId = 7): PlayedGroup {
  return {
    jobId,
    status: 'done',
    trajectories: episodes.map((e) => e.tr),
    turns: episodes.map((e) => e.records),
    relabelled: [],
    seqs: episodes.map((_, i) => seqBase + i),
    oldestVersion: 0,
    newestVersion: 0,
    interrupted: 0,
    startedAt: 0,
    endedAt: 0,
  };
}

const runTurn = (program: string, v: number, outputs?: number[]): Written => ({
  program,
  versions: [...program].map(() => v),
  action: 'run',
  record: outputs
    ? { action: 'run', program, outputs, reward: 0.05 }
    : { action: 'run', program, error: 'syntax', reward: -0.05 },
});
const submitTurn = (program: string, versions: number[], outputs: number[], passed: number): Written => ({
  program,
  versions,
  action: 'submit',
  record: { action: 'submit', program, outputs, passed, reward: passed / 2 },
});

/** A turn that submitted `program` (nothing else of it matters to the feed's bookkeeping). */
const submitted = (program: string): FeedTurn => ({
  action: 'submit',
  tokens: [],
  control: { text: '<submit>', version: 0 },
  program,
  expected: [],
  reward: 0,
});

/** A bare episode for the feed's bookkeeping tests. */
function episode(key: number, over: Partial<FeedEpisode> = {}): FeedEpisode {
  return {
    key: String(key),
    jobId: key,
    taskId: 't',
    name: 't',
    level: 'easy',
    examples: [],
    turns: [submitted('x')],
    reward: 0,
    solved: false,
    lane: 'rollout-0',
    versions: [0],
    ...over,
  };
}

/** A solved or unsolved episode of `taskId` submitting `program`, written by `version`, with `reward`. */
function attempt(
  key: number,
  taskId: string,
  program: string,
  reward: number,
  version: number,
  level: Level = 'easy',
) {
  const turns = [submitted(program)];
  return episode(key, { taskId, level, turns, reward, solved: reward >= 1, versions: [version] });
}

describe('feedEpisodes', () => {
  it("shows each turn's program tokens with the version that wrote each, and what the sandbox answered", () => {
    const e1 = played([
      runTurn('x+', 3),
      runTurn('x*2', 3, [2, 6]),
      submitTurn('x*2', [3, 4, 4], [10, 14], 2),
    ]);
    const [ep] = feedEpisodes(job(), group([e1]), 'rollout-1');
    expect(ep?.key).toBe('40');
    expect(ep?.lane).toBe('rollout-1');
    expect(ep?.examples).toEqual(TASK.examples);
    expect(ep?.turns.map((t) => t.program)).toEqual(['x+', 'x*2', 'x*2']);
    // The syntax error of the first run, the outputs against the shown examples of the second.
    expect(ep?.turns[0]).toMatchObject({ action: 'run', error: 'syntax', expected: [2, 6] });
    expect(ep?.turns[0]?.outputs).toBeUndefined();
    expect(ep?.turns[1]).toMatchObject({ action: 'run', outputs: [2, 6], expected: [2, 6] });
    // The submit is scored on the hidden tests.
    expect(ep?.turns[2]).toMatchObject({
      action: 'submit',
      outputs: [10, 14],
      expected: [10, 14],
      passed: 2,
    });
    expect(ep?.solved).toBe(true);
    expect(ep?.reward).toBeCloseTo(1);
    // The second run fixed the two examples the first failed (it did not run); the submit after
    // a run that passed them all fixed nothing.
    expect(ep?.turns.map((t) => t.fixed)).toEqual([undefined, 2, undefined]);
    expect(ep?.turns.map(turnOutcome)).toEqual([
      { text: 'error: syntax', tone: 'bad' },
      { text: 'all right', tone: 'ok' },
      { text: '2 of 2 hidden', tone: 'ok' },
    ]);
    expect(ep?.name).toBe('double:2');
  });

  it('an episode that adopted a new version mid-turn shows both, token by token', () => {
    // Interrupted after its first token: version 3 wrote `x`, version 4 the rest and the submit.
    const e1 = played([submitTurn('x*2', [3, 4, 4], [10, 14], 2)]);
    const [ep] = feedEpisodes(job(), group([e1]), 'rollout-0');
    expect(ep?.versions).toEqual([3, 4]);
    expect(ep?.turns[0]?.tokens).toEqual([
      { text: 'x', version: 3 },
      { text: '*', version: 4 },
      { text: '2', version: 4 },
    ]);
    expect(ep?.turns[0]?.control).toEqual({ text: '<submit>', version: 4 });
  });

  it("carries the value head's estimate at each turn's first token, and none when the trajectory has none", () => {
    const e1 = played([runTurn('x+', 3), submitTurn('x*2', [3, 4, 4], [10, 14], 2)]);
    // A distinct V per position: each turn reads the one of its first policy token.
    const values = e1.tr.tokens.map((_, i) => i / 100);
    const firsts = e1.tr.owned.flatMap((o, i) => (o === 1 && e1.tr.owned[i - 1] !== 1 ? [i] : []));
    const [ep] = feedEpisodes(job(), group([{ ...e1, tr: { ...e1.tr, values } }]), 'rollout-0');
    expect(firsts).toHaveLength(2);
    expect(ep?.turns.map((t) => t.value)).toEqual(firsts.map((i) => i / 100));
    // A trajectory that recorded no values (an older or foreign one): no estimate shown.
    const [bare] = feedEpisodes(job(), group([{ ...e1, tr: { ...e1.tr, values: [] } }]), 'rollout-0');
    expect(bare?.turns.map((t) => 'value' in t)).toEqual([false, false]);
  });

  it('shows only the examples the observation held, and programs without answers when the group has none', () => {
    const wide: Task = { ...TASK, examples: [...TASK.examples, { input: 4, output: 8 }] };
    const e1 = played([runTurn('x', 0, [1, 3])], TASK); // its observation shows two examples
    const bare = { ...group([e1]), turns: undefined };
    const [ep] = feedEpisodes(job(wide), bare, 'rollout-0');
    expect(ep?.examples).toEqual(TASK.examples);
    expect(ep?.turns[0]?.program).toBe('x');
    expect(ep?.turns[0]?.outputs).toBeUndefined();
    expect(ep?.turns[0]?.error).toBeUndefined();
  });
});

describe('feedEpisodes of a tool-use task', () => {
  // One example shown (f(1) = 3 fits x+2, 3*x, 2*x+1, …); `<run>` reports on the task's tests.
  const TOOL: Task = {
    id: 'tool:linear:2*x+1',
    level: 'easy',
    kind: 'tooluse',
    examples: [{ input: 1, output: 3 }],
    tests: [0, 2, 3].map((x) => ({ input: x, output: 2 * x + 1 })),
    hidden: [9, 10].map((x) => ({ input: x, output: 2 * x + 1 })),
  };
  /** The report tokens the environment answers a run with (at most two failing tests). */
  const reportTokens = (t: Written) =>
    testReportTokens(
      testReport(TOOL.tests ?? [], t.record.outputs ? { outputs: t.record.outputs } : { error: 'syntax' }),
    );
  const runOn = (program: string, outputs: number[]): Written => ({
    ...runTurn(program, 1, outputs),
    record: { action: 'run', program, outputs, testsPassed: 0, reward: 0 },
  });

  it('shows the report each run read back (pass N of M, failing tests: input, expected, got) and the revision after it', () => {
    const e1 = played(
      [runOn('x+2', [2, 4, 5]), runOn('3*x', [0, 6, 9]), submitTurn('2*x+1', [2, 2, 2, 2, 2], [19, 21], 2)],
      TOOL,
      reportTokens,
    );
    const [ep] = feedEpisodes(job(TOOL), group([e1]), 'rollout-0');
    const [first, second, last] = ep?.turns ?? [];
    expect(ep?.examples).toEqual(TOOL.examples);
    // x+2 is right at 1 (shown) but wrong at 0, 2 and 3: the report shows the first two failures.
    expect(first?.report).toEqual({
      passed: 0,
      total: 3,
      failures: [
        { input: 0, expected: 1, output: 2 },
        { input: 2, expected: 5, output: 4 },
      ],
    });
    // A run's outputs are compared with the task's tests, not with the one example shown.
    expect(first).toMatchObject({ outputs: [2, 4, 5], expected: [1, 5, 7] });
    expect(first?.revised).toBeUndefined();
    expect(second?.report).toMatchObject({ passed: 0, total: 3 });
    expect(second?.revised).toBe(true);
    expect(last).toMatchObject({
      action: 'submit',
      program: '2*x+1',
      passed: 2,
      expected: [19, 21],
      revised: true,
    });
    expect(last?.report).toBeUndefined(); // a submit ends the episode: no report to read
  });

  it("a run that failed to run reports the sandbox's error; an unchanged program is not a revision", () => {
    const broken: Written = {
      ...runTurn('x+', 1),
      record: { action: 'run', program: 'x+', error: 'syntax', reward: 0 },
    };
    const e1 = played([broken, { ...broken, record: { ...broken.record } }], TOOL, reportTokens);
    const [ep] = feedEpisodes(job(TOOL), group([e1]), 'rollout-0');
    expect(ep?.turns[0]?.report).toEqual({ passed: 0, total: 3, failures: [], error: 'syntax' });
    expect(ep?.turns[1]?.revised).toBe(false);
  });

  const runs = (...programs: [string, number[] | undefined][]): Written[] =>
    programs.map(([program, outputs]) =>
      outputs
        ? runOn(program, outputs)
        : { ...runTurn(program, 1), record: { action: 'run', program, error: 'syntax', reward: 0 } },
    );
  const fixes = (turns: Written[]) =>
    feedEpisodes(job(TOOL), group([played(turns, TOOL, reportTokens)]), 'rollout-0')[0]?.turns.map(
      (t) => t.fixed,
    );
  const solving = submitTurn('2*x+1', [1, 1, 1, 1, 1, 1], [19, 21], 2);

  it('marks a revision that fixed failing tests: more of them pass in its own report, or it solved the task', () => {
    // x+1 passes 1 of 3 (at 0); 2*x+1 passes all 3: it fixed 2. The submit after it fixed nothing more.
    expect(fixes([...runs(['x+1', [1, 3, 4]], ['2*x+1', [1, 5, 7]]), solving])).toEqual([
      undefined,
      2,
      undefined,
    ]);
    // 3*x passes none of what x+2 failed: a revision that fixed nothing; the solving submit fixed all 3.
    const turns = fixes([...runs(['x+2', [2, 4, 5]], ['3*x', [0, 6, 9]]), solving]);
    expect(turns).toEqual([undefined, undefined, 3]);
  });

  it('a first-turn success fixed nothing; a run that did not run fails every test, and a fix after it counts', () => {
    expect(fixes([solving])).toEqual([undefined]);
    expect(fixes([...runs(['2*x+1', [1, 5, 7]]), solving])).toEqual([undefined, undefined]);
    // The error report: 0 of 3. x+1 then passes 1 of them; a revision that fails to run fixes none.
    expect(fixes(runs(['x+', undefined], ['x+1', [1, 3, 4]], ['x*', undefined]))).toEqual([
      undefined,
      1,
      undefined,
    ]);
  });

  it('a wrong submit after a failing run fixed nothing (its hidden tests are not the run’s tests)', () => {
    const wrong = submitTurn('x+2', [1, 1, 1, 1], [11, 12], 0);
    expect(fixes([...runs(['x+1', [1, 3, 4]]), wrong])).toEqual([undefined, undefined]);
  });

  it("a turn's outcome in a few words", () => {
    const [ep] = feedEpisodes(
      job(TOOL),
      group([played([...runs(['x+', undefined], ['x+1', [1, 3, 4]]), solving], TOOL, reportTokens)]),
      'rollout-0',
    );
    expect(ep?.turns.map(turnOutcome)).toEqual([
      { text: 'error: syntax', tone: 'bad' },
      { text: 'pass 1 of 3', tone: 'plain' },
      { text: '2 of 2 hidden', tone: 'ok' },
    ]);
    const wrong = submitTurn('x+2', [1, 1, 1, 1], [11, 12], 0);
    const [miss] = feedEpisodes(job(TOOL), group([played([wrong], TOOL, reportTokens)]), 'rollout-0');
    expect(miss?.turns.map(turnOutcome)).toEqual([{ text: '0 of 2 hidden', tone: 'plain' }]);
  });

  it('a relabelled task is named by what it asks for, not by its id', () => {
    const goal: Task = {
      ...TOOL,
      id: 'hindsight:8,0,16,24,72,80',
      examples: [{ input: 1, output: 8 }],
      tests: [0, 2, 3].map((x) => ({ input: x, output: 8 * x })),
      hidden: [9, 10].map((x) => ({ input: x, output: 8 * x })),
    };
    const e1 = played([submitTurn('x*8', [1, 1, 1, 1], [72, 80], 2)], goal, reportTokens);
    const [ep] = feedEpisodes(job(goal), group([e1]), 'rollout-0');
    expect(ep?.taskId).toBe('hindsight:8,0,16,24,72,80');
    expect(ep?.name).toBe('relabelled goal: f(0) = 0, f(1) = 8, f(2) = 16, f(3) = 24, …');
  });

  it('the examples kind has no report: its runs answer with the outputs', () => {
    const e1 = played([runTurn('x*2', 3, [2, 6])]);
    const [ep] = feedEpisodes(job(), group([e1]), 'rollout-0');
    expect(ep?.turns[0]?.report).toBeUndefined();
    expect(ep?.turns[0]).toMatchObject({ outputs: [2, 6], expected: [2, 6] });
  });
});

describe('ProgramFeed', () => {
  it('keeps the newest episodes, newest first, up to its limit', () => {
    const feed = new ProgramFeed({ limit: 3, maxPinned: 2, maxTasks: 10 });
    feed.add([1, 2].map((k) => episode(k)));
    feed.add([3, 4, 5].map((k) => episode(k)));
    expect(feed.list().map((e) => e.key)).toEqual(['5', '4', '3']);
    expect(feed.seen).toBe(5);
  });

  it('a pinned episode stays as newer ones arrive, where it was, until unpinned', () => {
    const feed = new ProgramFeed({ limit: 2, maxPinned: 1, maxTasks: 10 });
    feed.add([episode(1), episode(2)]);
    expect(feed.pin('1')).toBe(true);
    expect(feed.pin('2')).toBe(false); // the pins are full
    expect(feed.pin('9')).toBe(false); // not shown
    feed.add([episode(3), episode(4), episode(5)]);
    expect(feed.list().map((e) => e.key)).toEqual(['5', '4', '1']);
    expect(feed.isPinned('1')).toBe(true);
    feed.unpin('1');
    expect(feed.list().map((e) => e.key)).toEqual(['5', '4']);
    expect(feed.pins()).toEqual([]);
  });

  it('filters by level', () => {
    const feed = new ProgramFeed();
    feed.add([episode(1), episode(2, { level: 'medium' }), episode(3, { level: 'hard' })]);
    expect(feed.list('medium').map((e) => e.key)).toEqual(['2']);
    expect(feed.list('easy').map((e) => e.key)).toEqual(['1']);
    expect(feed.list('all')).toHaveLength(3);
  });

  it('the best-program table keeps the highest return, then the shorter program, and the first solving version', () => {
    const feed = new ProgramFeed();
    feed.add([attempt(1, 'a', 'x+x', 0.2, 1)]);
    feed.add([attempt(2, 'a', 'x*2+0', 1, 5), attempt(3, 'b', 'x', 0.1, 5, 'medium')]);
    feed.add([attempt(4, 'a', 'x*2', 1, 7), attempt(5, 'a', 'x+x+0', 0.5, 8)]);
    // A solving episode that finished with an older version arrives late (asynchronous rollouts).
    feed.add([attempt(6, 'a', 'x+x+0+0', 1, 4)]);
    const [a, b] = feed.bestPrograms();
    expect(a).toMatchObject({ taskId: 'a', program: 'x*2', reward: 1, solved: true, version: 7 });
    expect(a?.firstSolved).toBe(4);
    expect(a?.episodes).toBe(5);
    expect(b).toMatchObject({ taskId: 'b', level: 'medium', solved: false, firstSolved: null });
  });

  it("the table stays bounded and leaves relabelled tasks out; the feed's memory is its limits", () => {
    const feed = new ProgramFeed({ limit: 50, maxPinned: 20, maxTasks: 100 });
    for (let k = 0; k < 5000; k++) {
      feed.add([attempt(k, `task-${k % 300}`, 'x', k % 7 === 0 ? 1 : 0, k)]);
      feed.add([attempt(k + 10_000, `hindsight:${k}`, 'x', 1, k)]);
    }
    expect(feed.list()).toHaveLength(50);
    expect(feed.bestPrograms()).toHaveLength(100);
    expect(feed.bestPrograms().some((b) => b.taskId.startsWith('hindsight:'))).toBe(false);
    feed.clear();
    expect([feed.list().length, feed.bestPrograms().length, feed.seen]).toEqual([0, 0, 0]);
  });
});

describe('FeedAnnouncer', () => {
  it('announces a count of new episodes, at most once per interval', () => {
    const a = new FeedAnnouncer(10_000);
    expect(a.arrived(3, 0)).toBe('3 new episodes in the program feed');
    expect(a.arrived(4, 5_000)).toBeNull();
    expect(a.arrived(1, 9_000)).toBeNull();
    expect(a.arrived(1, 10_000)).toBe('6 new episodes in the program feed');
    expect(a.arrived(0, 30_000)).toBeNull();
    expect(a.arrived(1, 30_001)).toBe('1 new episode in the program feed');
  });
});

describe('version scale', () => {
  it('older versions are paler (less saturated) than newer ones, and the legend spans the range', () => {
    const sat = (c: string) => Number(/hsl\(\d+ (\d+)%/.exec(c)?.[1]);
    expect(sat(versionColor(2, 2, 10))).toBeLessThan(sat(versionColor(6, 2, 10)));
    expect(sat(versionColor(6, 2, 10))).toBeLessThan(sat(versionColor(10, 2, 10)));
    expect(versionLegend(3, 4).map((l) => l.version)).toEqual([3, 4]);
    const long = versionLegend(0, 100, 6).map((l) => l.version);
    expect(long[0]).toBe(0);
    expect(long.at(-1)).toBe(100);
    expect(long.length).toBeLessThanOrEqual(6);
    expect(versionRange([episode(1, { versions: [3, 4] }), episode(2, { versions: [9] })])).toEqual({
      lo: 3,
      hi: 9,
    });
    expect(versionRange([])).toBeNull();
  });
});
