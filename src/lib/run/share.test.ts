import { describe, expect, it } from 'vitest';
import { defaultRunConfig } from '../config/run-config';
import { settingsFromShare } from '../config/share-link';
import { copied, shareLinkFor } from './share';

describe('share links', () => {
  it('carry the settings, and refuse settings a run would refuse', async () => {
    const s = { ...defaultRunConfig(2), eta: 2, seed: 7 };
    const link = new URL(await shareLinkFor('https://lab.example/', s));
    expect(await settingsFromShare(link.searchParams.get('run') ?? '')).toMatchObject({ eta: 2, seed: 7 });
    await expect(shareLinkFor('https://lab.example/', { ...s, workers: 0 })).rejects.toThrow();
  });

  it('are not copied where there is no clipboard', async () => {
    expect(await copied('x')).toBe(false);
  });
});
