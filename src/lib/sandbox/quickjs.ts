import type {
  QuickJSContext,
  QuickJSHandle,
  QuickJSRuntime,
  QuickJSWASMModule,
} from 'quickjs-emscripten-core';
import { parseJsonResult } from './json';
import {
  resolveLimits,
  type Sandbox,
  type SandboxErrorKind,
  type SandboxLimits,
  type SandboxRequest,
  type SandboxResult,
} from './types';

/**
 * Installed in every fresh context before the program: `console.log` captured to a buffer and a
 * tiny `fs` over the request's files. Pure ECMAScript, evaluated inside QuickJS.
 */
const PRELUDE = `(() => {
  const out = [];
  const files = JSON.parse(__srl_files);
  const show = (v) => {
    if (typeof v === 'string') return v;
    try { const s = JSON.stringify(v); return s === undefined ? String(v) : s; } catch { return String(v); }
  };
  globalThis.console = { log: (...args) => { out.push(args.map(show).join(' ')); } };
  globalThis.fs = {
    readFile(name) {
      name = String(name);
      if (!Object.prototype.hasOwnProperty.call(files, name)) throw new Error('ENOENT: no such file ' + name);
      return files[name];
    },
    writeFile(name, data) { files[String(name)] = String(data); },
    list() { return Object.keys(files).sort(); },
  };
  Object.defineProperty(globalThis, '__srl', { value: { out, files } });
  delete globalThis.__srl_files;
})();`;

/**
 * Calls f on every input and returns one JSON string. Values JSON cannot carry faithfully
 * (undefined, NaN, ±Infinity, functions, symbols, bigints, cycles) are reported, not coerced.
 */
const RUNNER = `(() => {
  let fn;
  try { fn = f; } catch { return JSON.stringify({ problem: 'the program defines no function f' }); }
  if (typeof fn !== 'function') return JSON.stringify({ problem: 'f is ' + typeof fn + ', not a function' });
  const inputs = JSON.parse(__srl_inputs);
  const outputs = [];
  for (let i = 0; i < inputs.length; i++) outputs.push(fn(inputs[i]));
  const seen = [];
  const check = (v, path) => {
    const t = typeof v;
    if (v === null || t === 'string' || t === 'boolean') return null;
    if (t === 'number') return Number.isFinite(v) ? null : path + ' is ' + v;
    if (t !== 'object') return path + ' is ' + (t === 'undefined' ? 'undefined' : 'a ' + t);
    if (seen.includes(v)) return path + ' is a cycle';
    const proto = Object.getPrototypeOf(v);
    if (!Array.isArray(v) && proto !== Object.prototype && proto !== null) {
      return path + ' is a ' + ((proto.constructor && proto.constructor.name) || 'non-plain object');
    }
    seen.push(v);
    const keys = Array.isArray(v) ? v.map((_, i) => i) : Object.keys(v);
    for (const k of keys) { const p = check(v[k], path + '[' + JSON.stringify(k) + ']'); if (p) return p; }
    seen.pop();
    return null;
  };
  for (let i = 0; i < outputs.length; i++) {
    const p = check(outputs[i], 'f(input ' + i + ')');
    if (p) return JSON.stringify({ problem: p, kind: 'output' });
  }
  return JSON.stringify({ outputs, stdout: __srl.out.join('\\n'), files: __srl.files });
})()`;

class GuestError extends Error {
  constructor(
    readonly kind: SandboxErrorKind,
    message: string,
  ) {
    super(message);
  }
}

/** Turns a value thrown inside QuickJS into an error kind and message. */
export function classifyThrown(
  dumped: unknown,
  stage: 'compile' | 'run',
  interrupted: 'deadline' | 'memory' | null,
): GuestError {
  const err = (dumped ?? {}) as { name?: unknown; message?: unknown };
  const name = typeof err.name === 'string' ? err.name : '';
  const message = typeof err.message === 'string' ? err.message : describeThrown(dumped);
  if (/interrupted/i.test(message) && interrupted === 'memory') {
    return new GuestError(
      'memory',
      'the program grew the sandbox heap past its memory limit and was stopped',
    );
  }
  if (/interrupted/i.test(message) && (name === 'InternalError' || interrupted === 'deadline')) {
    return new GuestError('timeout', 'the program ran past its deadline and was stopped');
  }
  if (/out of memory/i.test(message)) return new GuestError('memory', `out of memory: ${message}`);
  if (/stack overflow|call stack/i.test(message))
    return new GuestError('memory', `stack limit exceeded: ${message}`);
  if (stage === 'compile') return new GuestError('syntax', `${name || 'SyntaxError'}: ${message}`);
  return new GuestError('runtime', name ? `${name}: ${message}` : message);
}

function describeThrown(v: unknown): string {
  if (typeof v === 'string') return `threw a string: ${JSON.stringify(v).slice(0, 200)}`;
  try {
    return `threw a non-Error value: ${String(JSON.stringify(v)).slice(0, 200)}`;
  } catch {
    return 'threw a non-Error value';
  }
}

/**
 * The QuickJS sandbox (DESIGN §8): one runtime per instance (per worker), a fresh context per
 * run, a deadline interrupt, memory and stack limits, an output size limit, and no host
 * capability at all — the context only has ECMAScript built-ins plus `console.log` and `fs`.
 */
export class QuickJSSandbox implements Sandbox {
  readonly kind = 'quickjs' as const;
  private runtime: QuickJSRuntime;
  /** Runtimes rebuilt after an internal failure (a metric). */
  rebuilds = 0;

  constructor(private readonly module: QuickJSWASMModule) {
    this.runtime = module.newRuntime();
    // The first run compiles the interpreter's hot paths; pay for it here, not in a program's deadline.
    this.runSync({
      code: 'const f = (x) => [x, JSON.stringify({ x })]',
      inputs: [1],
      limits: { deadlineMs: 10_000 },
    });
  }

  /** The interpreter's wasm memory (it only ever grows: its size is a leak detector). */
  get wasmMemory(): WebAssembly.Memory {
    return this.module.getWasmMemory();
  }

  async run(request: SandboxRequest): Promise<SandboxResult> {
    return this.runSync(request);
  }

  /** Runs synchronously (QuickJS never yields); `run` wraps it for the `Sandbox` interface. */
  runSync(request: SandboxRequest): SandboxResult {
    const t0 = performance.now();
    let limits: SandboxLimits;
    try {
      limits = resolveLimits(request.limits);
      if (typeof request.code !== 'string') throw new Error('code must be a string');
      if (!Array.isArray(request.inputs)) throw new Error('inputs must be an array');
    } catch (err) {
      return fail('internal', `bad request: ${(err as Error).message}`, t0);
    }
    const deadline = t0 + limits.deadlineMs;
    // QuickJS's own limit misses memory it cannot size (e.g. strings built piece by piece), so
    // the interrupt handler also stops a run that grows the wasm heap by more than the limit.
    const memory = this.module.getWasmMemory();
    const ceiling = memory.buffer.byteLength + limits.memoryBytes;
    const interrupt: { reason: 'deadline' | 'memory' | null } = { reason: null };
    let vm: QuickJSContext | undefined;
    try {
      this.runtime.setMemoryLimit(limits.memoryBytes);
      this.runtime.setMaxStackSize(limits.stackBytes);
      this.runtime.setInterruptHandler(() => {
        if (memory.buffer.byteLength > ceiling) interrupt.reason = 'memory';
        else if (performance.now() > deadline) interrupt.reason = 'deadline';
        return interrupt.reason !== null;
      });
      vm = this.runtime.newContext();
      const result = this.execute(vm, request, limits, interrupt);
      return { ...result, ms: performance.now() - t0 };
    } catch (err) {
      if (err instanceof GuestError) return fail(err.kind, err.message, t0);
      this.rebuild();
      if (err instanceof RangeError && /call stack/i.test(err.message)) {
        // The guest's recursion overflowed the host thread's stack before QuickJS's own limit.
        return fail('memory', `stack limit exceeded (host stack): ${err.message}`, t0);
      }
      return fail(
        'internal',
        `sandbox runtime failed and was rebuilt: ${(err as Error).message ?? String(err)}`,
        t0,
      );
    } finally {
      try {
        vm?.dispose();
      } catch {
        this.rebuild();
      }
    }
  }

  private execute(
    vm: QuickJSContext,
    req: SandboxRequest,
    limits: SandboxLimits,
    interrupt: { reason: 'deadline' | 'memory' | null },
  ): Omit<SandboxResult, 'ms'> {
    const setString = (name: string, value: string) => {
      const h = vm.newString(value);
      vm.setProp(vm.global, name, h);
      h.dispose();
    };
    const evaluate = (
      code: string,
      file: string,
      stage: 'compile' | 'run',
      compileOnly = false,
    ): QuickJSHandle => {
      const r = vm.evalCode(code, file, { type: 'global', compileOnly });
      if (r.error) {
        const dumped: unknown = vm.dump(r.error);
        r.error.dispose();
        throw classifyThrown(dumped, stage, interrupt.reason);
      }
      return r.value;
    };

    setString('__srl_files', JSON.stringify(req.files ?? {}));
    setString('__srl_inputs', JSON.stringify(req.inputs));
    evaluate(PRELUDE, 'prelude.js', 'run').dispose();
    evaluate(req.code, 'program.js', 'compile', true).dispose();
    evaluate(req.code, 'program.js', 'run').dispose();
    const handle = evaluate(RUNNER, 'runner.js', 'run');
    try {
      if (vm.typeof(handle) !== 'string') throw new GuestError('output', 'the runner was tampered with');
      const lengthHandle = vm.getProp(handle, 'length');
      const length = vm.getNumber(lengthHandle);
      lengthHandle.dispose();
      if (length > limits.outputChars) {
        throw new GuestError(
          'output',
          `outputs, stdout and files are ${length} characters, over the ${limits.outputChars} limit`,
        );
      }
      const text = vm.getString(handle);
      const pending = this.runtime.executePendingJobs();
      if (pending.error) pending.error.dispose();
      return parseJsonResult(text, req.inputs.length);
    } finally {
      handle.dispose();
    }
  }

  private rebuild(): void {
    this.rebuilds += 1;
    try {
      this.runtime.dispose();
    } catch {
      // A broken runtime may fail to free; the new one below replaces it either way.
    }
    this.runtime = this.module.newRuntime();
  }

  dispose(): void {
    this.runtime.dispose();
  }
}

function fail(kind: SandboxErrorKind, message: string, t0: number): SandboxResult {
  return { ok: false, stdout: '', error: { kind, message }, ms: performance.now() - t0 };
}
