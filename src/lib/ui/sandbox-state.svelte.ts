import { errorMessage } from '../errors';
import { SandboxBridge } from '../bridge/sandbox-bridge';
import { WorkerCrashed, WorkerTimeout } from '../bridge/worker-errors';
import type { CacheStats } from '../sandbox/cache';
import type { JsonValue, SandboxKind, SandboxRequest, SandboxResult } from '../sandbox/types';
import {
  WEBCONTAINER_BOOT_TIMEOUT_MS,
  WebContainerHost,
  type WebContainerStatus,
} from '../sandbox/webcontainer';
import { DRAFTS } from './draft';

/** What the panel says of a crashed sandbox worker. */
const crashText = (message: string) => `sandbox worker crashed: ${message}; it restarts on the next run`;

/** Which sandbox the panel runs programs in. */
export type SandboxChoice = 'auto' | 'quickjs' | 'webcontainer';

/** Parses the panel's inputs field: a JSON array of inputs. Throws with a readable message. */
export function parseInputs(text: string): JsonValue[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`inputs are not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  if (!Array.isArray(value)) throw new Error('inputs must be a JSON array, e.g. [1, 2, 3]');
  const huge = pathOfInfinite(value, '');
  if (huge !== null)
    throw new Error(
      `input ${huge} is past the largest number JavaScript holds (it would arrive as Infinity)`,
    );
  return value as JsonValue[];
}

/** Where in a parsed JSON value a number overflowed to ±Infinity (`0`, `2[1]`, `1.a`), or null. */
function pathOfInfinite(v: unknown, at: string): string | null {
  if (typeof v === 'number') return Number.isFinite(v) ? null : at;
  if (typeof v !== 'object' || v === null) return null;
  for (const [k, x] of Object.entries(v)) {
    const key = Array.isArray(v) ? (at === '' ? k : `${at}[${k}]`) : `${at}.${k}`;
    const found = pathOfInfinite(x, key);
    if (found !== null) return found;
  }
  return null;
}

/** UI state of the sandbox panel and of the page's one WebContainer. */
export class SandboxState {
  #code = $state(DRAFTS.sandboxCode.load('const f = (x) => x * 2 + 1'));
  /** The program in the sandbox panel (kept across reloads: `DRAFTS.sandboxCode`). */
  get code(): string {
    return this.#code;
  }
  set code(text: string) {
    this.#code = text;
    DRAFTS.sandboxCode.save(text);
  }
  inputs = $state('[1, 2, 3]');
  choice = $state<SandboxChoice>('auto');
  running = $state(false);
  result = $state.raw<SandboxResult | null>(null);
  /** Sandbox the last result came from. */
  ranOn = $state<SandboxKind | null>(null);
  /** Why the last run did not use the sandbox that was chosen, or null. */
  notice = $state<string | null>(null);
  error = $state<string | null>(null);
  webcontainer = $state.raw<WebContainerStatus>({ state: 'idle' });
  cache = $state.raw<CacheStats | null>(null);

  /** A crash rejects the run waiting on the worker (`WorkerCrashed`); the next run starts a new one. */
  readonly bridge = new SandboxBridge((message) => {
    this.bridge.terminate();
    this.error = crashText(message);
  });
  /** The page's WebContainer, once booted: a restarted worker is given it again. */
  private attachedRun: ((req: SandboxRequest) => Promise<SandboxResult>) | null = null;
  private readonly host = new WebContainerHost((s) => (this.webcontainer = s));

  /** Boots the page's WebContainer in the background; QuickJS serves runs meanwhile. */
  async bootWebContainer(timeoutMs = WEBCONTAINER_BOOT_TIMEOUT_MS): Promise<void> {
    const container = await this.host.boot(timeoutMs);
    if (!container) return;
    // What runs programs in it is a chunk of its own, fetched once the container is up.
    let code: typeof import('../sandbox/webcontainer-sandbox');
    try {
      code = await import('../sandbox/webcontainer-sandbox');
    } catch (err) {
      this.webcontainer = { state: 'unavailable', reason: `its runner did not load: ${errorMessage(err)}` };
      return;
    }
    const sandbox = new code.WebContainerSandbox(container);
    this.attachedRun = (req) => sandbox.run(req);
    await this.bridge.attachWebContainer(this.attachedRun);
  }

  private pick(): { kind: SandboxKind; notice: string | null } {
    const wc = this.webcontainer;
    if (this.choice === 'quickjs') return { kind: 'quickjs', notice: null };
    if (wc.state === 'ready') return { kind: 'webcontainer', notice: null };
    const why = wc.state === 'unavailable' ? `unavailable: ${wc.reason}` : wc.state;
    return { kind: 'quickjs', notice: `WebContainer is ${why} — ran on QuickJS instead` };
  }

  async run(): Promise<void> {
    this.error = null;
    let inputs: JsonValue[];
    try {
      inputs = parseInputs(this.inputs);
    } catch (err) {
      // The last run's result and notice are of other inputs: they go with the new error.
      this.error = (err as Error).message;
      this.result = null;
      this.notice = null;
      return;
    }
    const { kind, notice } = this.pick();
    this.running = true;
    // The last result is of the last program: while this one runs, the panel says so instead.
    this.result = null;
    this.notice = null;
    this.ranOn = kind;
    try {
      // A worker started again after a crash does not have the page's WebContainer yet.
      if (this.bridge.state !== 'running' && this.attachedRun)
        await this.bridge.attachWebContainer(this.attachedRun);
      const result = await this.bridge.api.run({ code: this.code, inputs }, kind);
      this.result = result;
      this.notice = notice;
      this.cache = await this.bridge.api.cacheStats();
    } catch (err) {
      this.error = this.failure(err);
    } finally {
      this.running = false;
    }
  }

  /**
   * What the panel says of a run that failed. The sandbox stops a program at its deadline, so a
   * worker past its answer limit is stuck: it is stopped, and the next run starts a new one.
   */
  private failure(err: unknown): string {
    if (err instanceof WorkerCrashed) return crashText(err.workerMessage);
    if (err instanceof WorkerTimeout) {
      this.bridge.terminate();
      return `the sandbox worker did not answer in ${err.limitMs / 1000} s and was stopped; it restarts on the next run`;
    }
    return errorMessage(err);
  }
}
