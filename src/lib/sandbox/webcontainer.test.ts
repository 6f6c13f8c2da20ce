import type { WebContainer } from '@webcontainer/api';
import { afterEach, describe, expect, it } from 'vitest';
import { WebContainerHost, type WebContainerStatus } from './webcontainer';

const g = globalThis as { crossOriginIsolated?: boolean };
afterEach(() => {
  delete g.crossOriginIsolated;
});

describe('WebContainerHost', () => {
  it('gives up after the boot timeout with a reason, instead of hanging like boot() does offline', async () => {
    g.crossOriginIsolated = true;
    const seen: WebContainerStatus['state'][] = [];
    const host = new WebContainerHost(
      (s) => seen.push(s.state),
      async () => ({ boot: () => new Promise<WebContainer>(() => undefined) }),
    );
    expect(await host.boot(50)).toBeNull();
    expect(seen).toEqual(['booting', 'unavailable']);
    expect(host.status).toEqual({
      state: 'unavailable',
      reason: expect.stringMatching(/did not finish within 0.05 s/),
    });
  });

  it('boots once per page, however often it is asked', async () => {
    g.crossOriginIsolated = true;
    let boots = 0;
    const fake = {} as WebContainer;
    const host = new WebContainerHost(undefined, async () => ({
      boot: async () => {
        boots += 1;
        return fake;
      },
    }));
    const [a, b] = await Promise.all([host.boot(), host.boot()]);
    expect(a).toBe(fake);
    expect(b).toBe(fake);
    expect(boots).toBe(1);
    expect(host.status.state).toBe('ready');
  });

  it('is unavailable without cross-origin isolation, and says so', async () => {
    const host = new WebContainerHost(undefined, async () => {
      throw new Error('must not load');
    });
    expect(await host.boot()).toBeNull();
    expect(host.status).toEqual({
      state: 'unavailable',
      reason: expect.stringMatching(/not cross-origin isolated/),
    });
  });

  it('reports a failing boot()', async () => {
    g.crossOriginIsolated = true;
    const host = new WebContainerHost(undefined, async () => ({
      boot: async () => {
        throw new Error('Unable to create more instances');
      },
    }));
    expect(await host.boot()).toBeNull();
    expect(host.status).toEqual({ state: 'unavailable', reason: 'Unable to create more instances' });
  });
});
