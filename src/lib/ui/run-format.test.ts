import { describe, expect, it } from 'vitest';
import {
  ETAS,
  etaLabel,
  meanRewardText,
  meanWaitText,
  pct,
  pctDown,
  slotsLine,
  taskIdsShown,
} from './run-format';

describe('run-format', () => {
  it('writes shares as percentages, rounded or rounded down', () => {
    expect(pct(0.698)).toBe('70%');
    expect(pctDown(0.698)).toBe('69%');
    expect(pctDown(0.7)).toBe('70%');
  });

  it('names every offered η', () => {
    expect(ETAS.map(etaLabel)).toEqual(['0 (synchronous)', '1', '2', '4', '8', 'unbounded']);
  });

  it('lists the first task ids and counts the rest', () => {
    const tasks = Array.from({ length: 1_210 }, (_, i) => ({ id: `t${i}` }));
    expect(taskIdsShown(tasks.slice(0, 3))).toBe('t0, t1, t2');
    expect(taskIdsShown(tasks.slice(0, 8))).toBe('t0, t1, t2, t3, t4, t5, t6, t7');
    expect(taskIdsShown(tasks, 2)).toBe('t0, t1, and 1,208 more');
  });

  it('counts slots per state in the dashboard order, leaving out empty states', () => {
    const states = ['idle', 'running', 'blocked', 'running', 'running', 'preempted'] as const;
    expect(slotsLine(states.map((state) => ({ state })))).toBe(
      '3 running · 1 blocked · 1 idle · 1 preempted',
    );
    expect(slotsLine([])).toBe('none');
    expect(meanRewardText(null)).toBe('–');
    expect(meanRewardText(0.51234)).toBe('0.512');
    expect(meanWaitText({ queueWaitMs: 0, startedGroups: 0 })).toBe('–');
    expect(meanWaitText({ queueWaitMs: 1250, startedGroups: 4 })).toBe('313 ms');
  });
});
