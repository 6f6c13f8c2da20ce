import { errorMessage } from '../errors';
import type { WebContainer } from '@webcontainer/api';

/** Where the page's one WebContainer stands. */
export type WebContainerStatus =
  | { state: 'idle' }
  | { state: 'booting'; since: number }
  | { state: 'ready'; bootMs: number }
  | { state: 'unavailable'; reason: string };

/** Default boot timeout: `boot()` never settles when StackBlitz's servers cannot be reached. */
export const WEBCONTAINER_BOOT_TIMEOUT_MS = 20_000;

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
