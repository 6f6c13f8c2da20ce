import { describe, expect, it } from 'vitest';
import { DEFAULT_CUSTOM_TRAIN, validateCustomTrain } from './config';

describe('validateCustomTrain', () => {
  it('takes the defaults', () => {
    expect(() => validateCustomTrain(DEFAULT_CUSTOM_TRAIN)).not.toThrow();
  });

  it('names the field, its range and the value it got (an empty field: nothing)', () => {
    const bad = (o: Record<string, unknown>) => () => validateCustomTrain({ ...DEFAULT_CUSTOM_TRAIN, ...o });
    expect(bad({ iterations: 1.5 })).toThrow('iterations must be a whole number from 1 to 500, got 1.5');
    expect(bad({ iterations: null })).toThrow('iterations must be a whole number from 1 to 500, got nothing');
    expect(bad({ eta: 9 })).toThrow('η must be a whole number from 0 to 8, got 9');
    expect(bad({ workers: 0 })).toThrow('rollout workers must be a whole number from 1 to 4, got 0');
    expect(bad({ updatesPerBatch: -1 })).toThrow(
      'updates per batch must be a whole number of at least 1, got -1',
    );
  });
});
