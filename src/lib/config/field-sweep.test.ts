import { describe, expect, it } from 'vitest';
import { defaultRunConfig, fieldAt, validateRunConfig, withOverrides } from './run-config';
import {
  fieldSweepLegs,
  parseNumberList,
  parseSweepValues,
  sweepableFields,
  sweepChoices,
  validateFieldSweep,
} from './field-sweep';
import { SWEEP_COMPARISONS } from './sweep-comparisons';
import { sweepSeconds, sweepTimeText } from './sweep-time';

const c = defaultRunConfig(2);

describe('a field sweep', () => {
  it('offers the numeric fields and the choices, not the seed or flags', () => {
    const paths = sweepableFields(c).map((f) => f.path);
    expect(paths).toContain('learner.clipEps');
    expect(paths).toContain('pipeline.eta');
    expect(paths).toContain('learner.strategy');
    expect(paths).toContain('pipeline.schedule');
    expect(paths).not.toContain('seed');
    expect(paths).not.toContain('task.curriculum.enabled');
  });

  it('compares the choices of a choice field: update strategies, schedules', () => {
    expect(sweepChoices('pipeline.schedule')).toEqual(['learning-value', 'fifo', 'expected-reward']);
    expect(sweepChoices('learner.clipEps')).toEqual([]);
    const values = parseSweepValues(' full, frozen ,', 'learner.strategy');
    expect(values).toEqual(['full', 'frozen']);
    const legs = fieldSweepLegs(c, { path: 'learner.strategy', values, seeds: [1, 2, 3] });
    expect(legs).toHaveLength(6);
    expect(legs[3]?.overrides).toEqual({ learner: { strategy: 'frozen' }, seed: 1 });
    expect(() =>
      validateFieldSweep(c, { path: 'pipeline.schedule', values: ['fifo', 'random'], seeds: [1] }),
    ).toThrow(/^pipeline\.schedule must be one of/);
    expect(() => parseSweepValues(' , ', 'pipeline.schedule')).toThrow(
      'values: give at least one of learning-value, fifo, expected-reward',
    );
    // Numbers still read as numbers.
    expect(parseSweepValues('0.1, inf', 'pipeline.eta')).toEqual([0.1, Infinity]);
  });

  it('offers the strategies and the schedules as comparisons that run as they are', () => {
    expect(SWEEP_COMPARISONS.map((x) => x.label)).toEqual(['Strategies', 'Scheduling']);
    for (const cmp of SWEEP_COMPARISONS) {
      const spec = { path: cmp.path, values: [...cmp.values], seeds: [1, 2, 3] };
      expect(() => validateFieldSweep(c, spec)).not.toThrow();
      const legs = fieldSweepLegs(c, spec);
      expect(legs).toHaveLength(cmp.values.length * 3);
      expect(new Set(legs.map((l) => l.value))).toEqual(new Set(cmp.values));
      for (const l of legs) {
        const leg = withOverrides(c, l.overrides);
        expect(() => validateRunConfig(leg)).not.toThrow();
        expect(fieldAt(leg, cmp.path)).toBe(l.value);
      }
    }
  });

  it('runs every value with every seed, value by value, each leg setting its field and seed', () => {
    const legs = fieldSweepLegs(c, { path: 'learner.clipEps', values: [0.1, 0.3], seeds: [1, 2] });
    expect(legs.map((l) => [l.value, l.seed])).toEqual([
      [0.1, 1],
      [0.1, 2],
      [0.3, 1],
      [0.3, 2],
    ]);
    expect(legs[2]?.overrides).toEqual({ learner: { clipEps: 0.3 }, seed: 1 });
    expect(legs.every((l) => l.path === 'learner.clipEps')).toBe(true);
  });

  it('refuses a value out of the field’s limits, naming the field and its range', () => {
    expect(() => validateFieldSweep(c, { path: 'learner.clipEps', values: [0.1, 5], seeds: [1] })).toThrow(
      'learner.clipEps must be a number above 0, at most 1, got 5',
    );
    expect(() => validateFieldSweep(c, { path: 'pipeline.workers', values: [1.5], seeds: [1] })).toThrow(
      /^pipeline\.workers must be an integer from/,
    );
    expect(() => validateFieldSweep(c, { path: 'learner.clipEps', values: [0.1], seeds: [-1] })).toThrow(
      /^seed must be an integer from 0/,
    );
  });

  it('refuses a field that is neither a number nor a choice, and empty or repeated lists', () => {
    expect(() => validateFieldSweep(c, { path: 'learner.nope', values: [1], seeds: [1] })).toThrow(
      'learner.nope: there is no such field',
    );
    expect(() => validateFieldSweep(c, { path: 'task.curriculum.enabled', values: [1], seeds: [1] })).toThrow(
      'task.curriculum.enabled: it is neither a number nor a choice',
    );
    expect(() => validateFieldSweep(c, { path: 'learner.clipEps', values: [], seeds: [1] })).toThrow(
      'at least one value',
    );
    expect(() => validateFieldSweep(c, { path: 'learner.clipEps', values: [0.2], seeds: [] })).toThrow(
      'seeds: the sweep needs at least one seed',
    );
    expect(() => validateFieldSweep(c, { path: 'learner.clipEps', values: [0.2, 0.2], seeds: [1] })).toThrow(
      'learner.clipEps: 0.2 is listed twice',
    );
  });

  it('reads a comma list of numbers, naming the entry that is not one', () => {
    expect(parseNumberList(' 0.1, 0.2,0.3 ,', 'values')).toEqual([0.1, 0.2, 0.3]);
    expect(parseNumberList('0, inf', 'values')).toEqual([0, Infinity]);
    expect(() => parseNumberList('0.1, abc', 'values')).toThrow('values: "abc" is not a number');
    expect(() => parseNumberList(' , ', 'seeds')).toThrow('seeds: give at least one');
  });

  it('estimates its time from the legs and their episodes', () => {
    expect(sweepSeconds(4, 1000)).toBeCloseTo(4 * (26 + 10));
    expect(sweepTimeText(40)).toBe('about 40 s');
    expect(sweepTimeText(12 * 60 + 10)).toBe('about 12 min');
  });
});
