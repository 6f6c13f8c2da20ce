import { describe, expect, it } from 'vitest';
import {
  builtInSuite,
  BUILT_IN_NAME,
  EXAMPLE_TASK,
  exportedSuite,
  importedSuite,
  MAX_SAMPLES,
  parseTaskText,
  samplesProblem,
  savedSuite,
  suiteFile,
} from './suite-entries';

describe('suite entries', () => {
  it('the built-in suite has a train / held-out split; a saved one is all held out', () => {
    const built = builtInSuite();
    expect(built.name).toBe(BUILT_IN_NAME);
    expect(built.tasks.some((t) => t.heldOut)).toBe(true);
    expect(built.tasks.some((t) => !t.heldOut)).toBe(true);
    expect(built.tasks[0]).not.toHaveProperty('program');
    const saved = savedSuite({ name: 'mine', tasks: [EXAMPLE_TASK] });
    expect(saved).toEqual({ name: 'mine', source: 'saved', tasks: [{ ...EXAMPLE_TASK, heldOut: true }] });
  });

  it('exports a file without the split, named after the suite, that imports back', () => {
    const entry = savedSuite({ name: '  my / tasks!', tasks: [EXAMPLE_TASK] });
    const { fileName, text } = exportedSuite(entry);
    expect(fileName).toBe('my-tasks.json');
    expect(JSON.parse(text)).toEqual(suiteFile(entry));
    expect(suiteFile(entry).tasks[0]).not.toHaveProperty('heldOut');
    expect(importedSuite(fileName, text)).toEqual({
      suite: { name: '  my / tasks!', tasks: [EXAMPLE_TASK] },
    });
    expect(exportedSuite(savedSuite({ name: '***', tasks: [] })).fileName).toBe('suite.json');
  });

  it('refuses a bad file with its path, and a file named like the built-in suite', () => {
    expect(importedSuite('a.json', '{"name":"x","tasks":[{"id":1}]}')).toMatchObject({
      problem: expect.stringMatching(/^a\.json was not imported: \$\.tasks\[0\]/),
    });
    const builtIn = JSON.stringify({ name: BUILT_IN_NAME, tasks: [EXAMPLE_TASK] });
    expect(importedSuite('b.json', builtIn)).toMatchObject({
      problem: expect.stringContaining(`"${BUILT_IN_NAME}" is the built-in suite's name`),
    });
  });

  it('samples per task: a whole number from 1 to MAX_SAMPLES', () => {
    expect(samplesProblem(1)).toBeNull();
    expect(samplesProblem(MAX_SAMPLES)).toBeNull();
    expect(samplesProblem(0)).toMatch(/got 0$/);
    expect(samplesProblem(MAX_SAMPLES + 1)).toMatch(/whole number from 1 to 16/);
    expect(samplesProblem(1.5)).not.toBeNull();
  });

  it('reads a task from the editor, or says what is wrong with it', () => {
    expect(parseTaskText(JSON.stringify(EXAMPLE_TASK))).toEqual(EXAMPLE_TASK);
    expect(() => parseTaskText('{')).toThrow(/the task is not valid JSON/);
    expect(() => parseTaskText('{"id":"t"}')).toThrow(/^task/);
  });
});
