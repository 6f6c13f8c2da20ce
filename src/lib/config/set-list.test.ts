import { describe, expect, it } from 'vitest';
import { overridesFromSetList } from './set-list';

describe('a --set list', () => {
  it('is checked whole when one setting needs another given after it', () => {
    expect(overridesFromSetList(['learner.rewardResource=0.1', 'pipeline.budgetSandboxMs=2'])).toEqual({
      learner: { rewardResource: 0.1 },
      pipeline: { budgetSandboxMs: 2 },
    });
    expect(overridesFromSetList(['learner.clipEps=0.1'])).toEqual({ learner: { clipEps: 0.1 } });
  });

  it('throws the first bad setting’s error when the whole list is not valid either', () => {
    expect(() => overridesFromSetList(['learner.rewardResource=0.1'])).toThrow(
      /--set learner.rewardResource=0.1: .*set pipeline.budgetSandboxMs too/,
    );
    expect(() => overridesFromSetList(['learner.rewardResource=0.1', 'pipeline.nothing=2'])).toThrow(
      /--set learner.rewardResource=0.1/,
    );
    expect(() => overridesFromSetList(['learner.clipEps=7'])).toThrow(/learner.clipEps must be/);
  });
});
