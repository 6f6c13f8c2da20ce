/// <reference lib="webworker" />
import * as Comlink from 'comlink';
import RELEASE_SYNC from '@jitl/quickjs-wasmfile-release-sync';
import wasmLocation from '@jitl/quickjs-wasmfile-release-sync/wasm?url';
import { newQuickJSWASMModuleFromVariant, newVariant } from 'quickjs-emscripten-core';
import { CachedSandbox, type CacheStats } from '../src/lib/sandbox/cache';
import { runContract, type ContractOutcome } from '../src/lib/sandbox/contract';
import { QuickJSSandbox } from '../src/lib/sandbox/quickjs';
import type { Sandbox, SandboxKind, SandboxRequest, SandboxResult } from '../src/lib/sandbox/types';

/** Soak figures: many runs in this worker, fresh context each. */
export interface SoakReport {
  runs: number;
  /** Runs whose outputs were not the expected ones. */
  wrong: number;
  /** The first few of those: run index, error kind and message, ms. */
  failures: { run: number; kind: string; message: string; ms: number }[];
  runsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Growth of the QuickJS wasm heap from after warm-up to the end, in MB. */
  wasmGrowthMb: number;
}

let quickjs: Promise<QuickJSSandbox> | undefined;
let cached: CachedSandbox | undefined;
/** A WebContainer sandbox on the main thread, reached through a comlink proxy. */
let remote: ((req: SandboxRequest) => Promise<SandboxResult>) | undefined;

function loadQuickJS(): Promise<QuickJSSandbox> {
  quickjs ??= newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmLocation })).then(
    (m) => new QuickJSSandbox(m),
  );
  return quickjs;
}

async function sandboxFor(kind: SandboxKind): Promise<Sandbox> {
  if (kind === 'webcontainer') {
    if (!remote) throw new Error('no WebContainer is attached to this worker');
    const run = remote;
    return { kind, run: (r) => run(r), dispose: () => undefined };
  }
  cached ??= new CachedSandbox(await loadQuickJS());
  return cached;
}

/** Nearest-rank quantile: the smallest value with at least q of them at or below it. */
const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;

const api = {
  /** Runs one program (cached by tests + program text). */
  async run(request: SandboxRequest, kind: SandboxKind = 'quickjs'): Promise<SandboxResult> {
    return (await sandboxFor(kind)).run(request);
  },

  /** The contract suite (src/lib/sandbox/corpus.ts), uncached, on the chosen sandbox. */
  async contract(kind: SandboxKind = 'quickjs'): Promise<ContractOutcome[]> {
    const sandbox = kind === 'quickjs' ? await loadQuickJS() : await sandboxFor(kind);
    return runContract(sandbox);
  },

  /** `runs` typical task programs, each different, fresh context each, outputs checked. */
  async soak(runs: number): Promise<SoakReport> {
    const sandbox = await loadQuickJS();
    const memory = sandbox.wasmMemory;
    const wasm0 = memory.buffer.byteLength;
    const times: number[] = [];
    let wrong = 0;
    const failures: SoakReport['failures'] = [];
    const t0 = performance.now();
    for (let i = 0; i < runs; i++) {
      const a = (i % 7) + 1;
      const b = i % 13;
      const r = sandbox.runSync({ code: `const f = (x) => x * ${a} + ${b}`, inputs: [0, 1, 2, 5] });
      times.push(r.ms);
      const want = [b, a + b, 2 * a + b, 5 * a + b];
      if (!r.ok || JSON.stringify(r.outputs) !== JSON.stringify(want)) {
        wrong += 1;
        if (failures.length < 5) {
          failures.push({
            run: i,
            kind: r.error?.kind ?? 'wrong outputs',
            message: r.error?.message ?? JSON.stringify(r.outputs),
            ms: r.ms,
          });
        }
      }
    }
    const elapsed = performance.now() - t0;
    times.sort((x, y) => x - y);
    return {
      runs,
      wrong,
      failures,
      runsPerSec: runs / (elapsed / 1000),
      p50Ms: quantile(times, 0.5),
      p99Ms: quantile(times, 0.99),
      wasmGrowthMb: (memory.buffer.byteLength - wasm0) / 2 ** 20,
    };
  },

  /** Runs each request in order on QuickJS, uncached (the bench's `--programs FILE`). */
  async runBatch(requests: SandboxRequest[]): Promise<SandboxResult[]> {
    const sandbox = await loadQuickJS();
    return requests.map((r) => sandbox.runSync(r));
  },

  /** ms past the deadline before each of `runs` infinite loops came back. */
  async timeoutOvershoot(runs: number, deadlineMs: number): Promise<number[]> {
    const sandbox = await loadQuickJS();
    const out: number[] = [];
    for (let i = 0; i < runs; i++) {
      const r = sandbox.runSync({
        code: `const f = () => { for (let i = ${i}; ; i++) {} }`,
        inputs: [0],
        limits: { deadlineMs },
      });
      if (r.error?.kind !== 'timeout')
        throw new Error(`an infinite loop came back as ${r.error?.kind ?? 'ok'}`);
      out.push(r.ms - deadlineMs);
    }
    return out;
  },

  cacheStats(): CacheStats | null {
    return cached?.cache.stats ?? null;
  },

  /** Attaches (or, with null, detaches) the main thread's WebContainer sandbox. */
  attachWebContainer(run: ((req: SandboxRequest) => Promise<SandboxResult>) | null): void {
    remote = run ?? undefined;
  },
};

export type SandboxApi = typeof api;

Comlink.expose(api);
