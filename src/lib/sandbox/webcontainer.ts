import { errorMessage } from '../errors';
import type { WebContainer } from '@webcontainer/api';
import { nodeScript, readNodeOutput } from './node-runner';
import { resolveLimits, type Sandbox, type SandboxRequest, type SandboxResult } from './types';

/** Where the page's one WebContainer stands. */
export type WebContainerStatus =
  | { state: 'idle' }
  | { state: 'booting'; since: number }
  | { state: 'ready'; bootMs: number }
  | { state: 'unavailable'; reason: string };

/** Default boot timeout: `boot()` never settles when StackBlitz's servers cannot be reached. */
export const WEBCONTAINER_BOOT_TIMEOUT_MS = 20_000;

/**
 * Wall-clock budget of one WebContainer run on top of the program's deadline: spawning `node`
 * takes far longer than a QuickJS context.
 */
export const WEBCONTAINER_SPAWN_MS = 3_000;

/**
 * Boots the page's single WebContainer (main thread only, once per page), with a timeout.
 * `load` imports `@webcontainer/api` lazily so pages that never use it do not pay for it.
 */
export class WebContainerHost {
  status: WebContainerStatus = { state: 'idle' };
  private booting: Promise<WebContainer | null> | undefined;

  constructor(
    private readonly onStatus: (s: WebContainerStatus) => void = () => undefined,
    private readonly load: () => Promise<{ boot(): Promise<WebContainer> }> = async () =>
      (await import('@webcontainer/api')).WebContainer,
  ) {}

  /** The container, or null when it is unavailable (the reason is in `status`). */
  boot(timeoutMs = WEBCONTAINER_BOOT_TIMEOUT_MS): Promise<WebContainer | null> {
    this.booting ??= this.doBoot(timeoutMs);
    return this.booting;
  }

  private set(status: WebContainerStatus): void {
    this.status = status;
    this.onStatus(status);
  }

  private async doBoot(timeoutMs: number): Promise<WebContainer | null> {
    const t0 = performance.now();
    this.set({ state: 'booting', since: Date.now() });
    if (!globalThis.crossOriginIsolated) {
      this.set({
        state: 'unavailable',
        reason: 'the page is not cross-origin isolated (COOP/COEP), which WebContainer needs',
      });
      return null;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const api = await this.load();
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(
                `boot() did not finish within ${timeoutMs / 1000} s (StackBlitz's servers unreachable?)`,
              ),
            ),
          timeoutMs,
        );
      });
      const container = await Promise.race([api.boot(), timeout]);
      this.set({ state: 'ready', bootMs: performance.now() - t0 });
      return container;
    } catch (err) {
      this.set({ state: 'unavailable', reason: errorMessage(err) });
      return null;
    } finally {
      clearTimeout(timer);
    }
  }
}

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
