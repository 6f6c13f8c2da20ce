import type { WebContainer } from '@webcontainer/api';
import { afterEach, describe, expect, it } from 'vitest';
import { WebContainerHost, type WebContainerStatus } from './webcontainer';
import { WebContainerSandbox } from './webcontainer-sandbox';

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

/** A container whose node writes `chunks` and exits with 0; its fs refuses a file named `bad`. */
function fakeContainer(chunks: string[]): WebContainer {
  const fs = {
    rm: async () => undefined,
    mkdir: async () => undefined,
    writeFile: async (path: string) => {
      if (path.endsWith('/bad')) throw new Error('EINVAL: invalid file name');
    },
  };
  const spawn = async () => ({
    output: new ReadableStream<string>({
      start(c) {
        for (const chunk of chunks) c.enqueue(chunk);
        c.close();
      },
    }),
    exit: new Promise<number>((resolve) => setTimeout(() => resolve(0), 10)),
    kill: () => undefined,
  });
  return { fs, spawn } as unknown as WebContainer;
}

describe('WebContainerSandbox', () => {
  it('a request its container refuses comes back as an internal error, not a throw', async () => {
    const sandbox = new WebContainerSandbox(fakeContainer([]));
    const r = await sandbox.run({ code: 'const f = (x) => x', inputs: [1], files: { bad: 'x' } });
    expect(r.ok).toBe(false);
    expect(r.error).toEqual({ kind: 'internal', message: 'WebContainer: EINVAL: invalid file name' });
  });

  it('keeps no more of what node writes than the output limit allows, and says so', async () => {
    const sandbox = new WebContainerSandbox(
      fakeContainer(Array.from({ length: 50 }, () => 'y'.repeat(10_000))),
    );
    const r = await sandbox.run({ code: 'const f = (x) => x', inputs: [1], limits: { outputChars: 1000 } });
    expect(r.error).toEqual({ kind: 'output', message: 'node wrote more than the 1000-character limit' });
  });
});
