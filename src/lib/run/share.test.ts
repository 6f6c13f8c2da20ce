import { describe, expect, it } from 'vitest';
import { defaultRunConfig, withOverrides } from '../config/run-config';
import { settingsFromShare } from '../config/share-link';
import { copied, shareLinkFor } from './share';

describe('share links', () => {
  it('carry the settings, and refuse settings a run would refuse', async () => {
    const s = withOverrides(defaultRunConfig(2), { pipeline: { eta: 2 }, seed: 7 });
    const link = new URL(await shareLinkFor('https://lab.example/', s));
    expect(await settingsFromShare(link.searchParams.get('run') ?? '')).toMatchObject({
      pipeline: { eta: 2 },
      seed: 7,
    });
    await expect(
      shareLinkFor('https://lab.example/', withOverrides(s, { pipeline: { workers: 0 } })),
    ).rejects.toThrow(/pipeline\.workers must be an integer from 1 to 8, got 0/);
  });

  it('are not copied where there is no clipboard', async () => {
    expect(await copied('x')).toBe(false);
  });
});
