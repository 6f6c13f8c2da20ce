import { errorMessage } from '../errors';
import type { WebContainer } from '@webcontainer/api';
import { nodeScript, readNodeOutput } from './node-runner';
import { resolveLimits, type Sandbox, type SandboxRequest, type SandboxResult } from './types';

// Apart from `webcontainer.ts` (the boot, which the page starts at once): the page fetches this
// chunk once its WebContainer is up.

/**
 * Wall-clock budget of one WebContainer run on top of the program's deadline: spawning `node`
 * takes far longer than a QuickJS context.
 */
export const WEBCONTAINER_SPAWN_MS = 3_000;

/** Runs programs with real Node.js inside the page's WebContainer (same result type as QuickJS). */
export class WebContainerSandbox implements Sandbox {
  readonly kind = 'webcontainer' as const;

  constructor(private readonly container: WebContainer) {}

  async run(request: SandboxRequest): Promise<SandboxResult> {
    const t0 = performance.now();
    try {
      return await this.spawnRun(request, t0);
    } catch (err) {
      // The container's fs or spawn refused (a file named "..", a container gone): a result, not a throw.
      return {
        ok: false,
        stdout: '',
        error: {
          kind: 'internal',
          message: `WebContainer: ${errorMessage(err)}`,
        },
        ms: performance.now() - t0,
      };
    }
  }

  private async spawnRun(request: SandboxRequest, t0: number): Promise<SandboxResult> {
    const limits = resolveLimits(request.limits);
    const fs = this.container.fs;
    await fs.rm('/srl', { recursive: true, force: true });
    await fs.mkdir('/srl/files', { recursive: true });
    for (const [name, text] of Object.entries(request.files ?? {}))
      await fs.writeFile(`/srl/files/${name.replace(/[\\/]/g, '_')}`, text);
    await fs.writeFile('/srl/run.cjs', nodeScript(request, limits));
    const proc = await this.container.spawn('node', ['/srl/run.cjs']);
    // What node writes past the output limit (with room for the result's own framing) is dropped:
    // a program writing through process.stdout skips the console capture's limit.
    let text = '';
    let overflow = false;
    const room = limits.outputChars * 2 + 4096;
    void proc.output
      .pipeTo(
        new WritableStream({
          write: (chunk) => {
            overflow ||= text.length + chunk.length > room;
            if (text.length < room) text += chunk.slice(0, room - text.length);
          },
        }),
      )
      .catch(() => undefined);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const killed = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), limits.deadlineMs + WEBCONTAINER_SPAWN_MS);
    });
    const exit = await Promise.race([proc.exit, killed]);
    clearTimeout(timer);
    const ms = performance.now() - t0;
    if (exit === 'timeout') {
      proc.kill();
      return {
        ok: false,
        stdout: '',
        error: { kind: 'timeout', message: 'node ran past its wall-clock limit and was killed' },
        ms,
      };
    }
    if (overflow)
      return {
        ok: false,
        stdout: '',
        error: { kind: 'output', message: `node wrote more than the ${limits.outputChars}-character limit` },
        ms,
      };
    return { ...readNodeOutput(text, exit, request.inputs.length), ms };
  }

  dispose(): void {
    // The container lives as long as the page (one boot per page); nothing to free per sandbox.
  }
}
