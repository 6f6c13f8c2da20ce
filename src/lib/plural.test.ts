import { describe, expect, it } from 'vitest';
import { count } from './plural';

describe('count', () => {
  it('puts the noun in the singular for exactly one', () => {
    expect([0, 1, 2].map((n) => count(n, 'task'))).toEqual(['0 tasks', '1 task', '2 tasks']);
  });

  it('takes an irregular plural', () => {
    expect([1, 3].map((n) => count(n, 'trajectory', 'trajectories'))).toEqual([
      '1 trajectory',
      '3 trajectories',
    ]);
  });
});
