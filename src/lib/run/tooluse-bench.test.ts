import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { EvalRow } from '../env/evaluate';
import { builtInTasks } from '../env/task-kinds';
import { BUILT_IN_SEED } from './pipeline';
import { fileFigures, fileSummary, readToolUseFile, type FileFigures } from './tooluse-bench';

const EXAMPLE = 'e2e/bench/tooluse-tasks.example.json';
const training = builtInTasks('tooluse', BUILT_IN_SEED).filter((t) => !t.heldOut && t.level === 'easy');
const reading = (text: string) => () => text;

const toolTask = (id: string, shownAt = 1) => ({
  id,
  level: 'easy',
  kind: 'tooluse',
  examples: [{ input: shownAt, output: shownAt - 2 }],
  tests: [0, 2, 3, 4, 5, 6, 7, 8].map((x) => ({ input: x, output: x - 2 })),
  hidden: [9, 10, 11, 12, 13].map((x) => ({ input: x, output: x - 2 })),
});

describe("the tooluse bench's suite file", () => {
  it('reads the example file: its tool-use tasks, all held out, one of them a training task', () => {
    const f = readToolUseFile(EXAMPLE, (p) => readFileSync(p, 'utf8'), training);
    expect(f.tasks.length).toBeGreaterThanOrEqual(4);
    expect(f.tasks.every((t) => t.kind === 'tooluse' && t.heldOut)).toBe(true);
    expect(f.skipped).toBe(0);
    expect(f.equalTraining).toEqual({ 'file:x-2': 'tool:x+b:-2' });
  });

  it('names the file and the reason when it cannot be read, does not parse, or holds no tool-use task', () => {
    const missing = () => {
      throw new Error('ENOENT: no such file or directory');
    };
    expect(() => readToolUseFile('gone.json', missing, training)).toThrow(
      /--tasks gone\.json: cannot be read \(ENOENT/,
    );
    expect(() => readToolUseFile('bad.json', reading('{"name": "x", '), training)).toThrow(
      /--tasks bad\.json: not a task suite: \$: not valid JSON/,
    );
    expect(() =>
      readToolUseFile(
        'bad.json',
        reading(JSON.stringify({ name: 'x', tasks: [{ ...toolTask('a'), tests: [] }] })),
        training,
      ),
    ).toThrow(/--tasks bad\.json: not a task suite: \$\.tasks\[0\]\.tests: must not be empty/);
    const examplesOnly = {
      name: 'x',
      tasks: [
        { id: 'a', level: 'easy', examples: [{ input: 1, output: 2 }], hidden: [{ input: 2, output: 3 }] },
      ],
    };
    expect(() => readToolUseFile('ex.json', reading(JSON.stringify(examplesOnly)), training)).toThrow(
      '--tasks ex.json: holds no tool-use task (1 tasks, none of kind "tooluse")',
    );
  });

  it('keeps only the tool-use tasks, and counts a task as a training task only when it shows, tests and hides the same', () => {
    const examples = {
      id: 'e',
      level: 'easy',
      examples: [{ input: 1, output: 2 }],
      hidden: [{ input: 2, output: 3 }],
    };
    const suite = { name: 's', tasks: [examples, toolTask('same'), toolTask('shown elsewhere', 3)] };
    const f = readToolUseFile('s.json', reading(JSON.stringify(suite)), training);
    expect(f.tasks.map((t) => t.id)).toEqual(['same', 'shown elsewhere']);
    expect(f.skipped).toBe(1);
    expect(f.equalTraining).toEqual({ same: 'tool:x+b:-2' });
  });
});

const row = (
  agent: string,
  split: EvalRow['split'],
  success: number,
  reviseRate: number | null,
): EvalRow => ({
  agent,
  mode: 'greedy',
  split,
  level: 'all',
  episodes: 4,
  success,
  meanTurns: 2.5,
  meanReward: 0,
  meanParts: { pass: 0, ranOk: 0, closeness: 0, turnCost: 0, noSubmit: 0, total: 0 },
  runsPerTask: 0,
  toolUse: { solvedWithRun: 1, runFraction: 0.75, reviseRate, copyRate: 0.25, successOneTurn: 0.5 },
});

describe("the tooluse bench's file figures", () => {
  it("takes the policy's greedy held-out row; none is all nulls", () => {
    const f = fileFigures([
      row('untrained', 'heldOut', 0.1, 0.1),
      row('policy', 'train', 0.9, 0.9),
      row('policy', 'heldOut', 0.5, 0.25),
    ]);
    expect(f).toEqual({
      success: 0.5,
      reviseRate: 0.25,
      copyRate: 0.25,
      runFraction: 0.75,
      solvedWithRun: 1,
      meanTurns: 2.5,
      successForcedOneTurn: 0.5,
    });
    expect(Object.values(fileFigures([])).every((v) => v === null)).toBe(true);
  });

  it('summarises seeds as mean ± sd under tooluse.file keys; a missing revise rate is left out, not 0', () => {
    const file = readToolUseFile(EXAMPLE, (p) => readFileSync(p, 'utf8'), training);
    const figs = (success: number, reviseRate: number | null): FileFigures =>
      fileFigures([row('policy', 'heldOut', success, reviseRate)]);
    const out = fileSummary(file, [
      { multiTurn: figs(0.5, 0.5), fromScratch: figs(0, null), oneTurn: figs(0.25, null) },
      { multiTurn: figs(0.75, null), fromScratch: figs(0.25, null), oneTurn: figs(0.25, null) },
    ]);
    expect(out['tooluse.file']).toBe(EXAMPLE);
    expect(out['tooluse.file.tasks']).toBe(file.tasks.length);
    expect(out['tooluse.file.equalTraining']).toBe(1);
    expect(out['tooluse.file.successMultiTurn']).toEqual({
      mean: 0.625,
      sd: expect.closeTo(0.1768, 3) as number,
      n: 2,
    });
    expect(out['tooluse.file.successOneTurn']).toEqual({ mean: 0.25, sd: 0, n: 2 });
    expect(out['tooluse.file.gain']).toMatchObject({ mean: 0.375, n: 2 });
    expect(out['tooluse.file.reviseRate']).toEqual({ mean: 0.5, sd: 0, n: 1 });
    expect(out['tooluse.file.fromScratch']).toMatchObject({ reviseRate: { mean: null, sd: null, n: 0 } });
    for (const key of ['copyRate', 'runFraction', 'meanTurns'])
      expect(out).toHaveProperty([`tooluse.file.${key}`]);
  });
});
