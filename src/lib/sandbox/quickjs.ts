import type {
  Intrinsics,
  QuickJSContext,
  QuickJSHandle,
  QuickJSRuntime,
  QuickJSWASMModule,
} from 'quickjs-emscripten-core';
import { SERIALIZE_INTRINSICS, SERIALIZE_JSON } from './check-json';
import {
  callLabel,
  type JsonValue,
  resolveLimits,
  type Sandbox,
  type SandboxErrorKind,
  type SandboxLimits,
  type SandboxRequest,
  type SandboxResult,
} from './types';

/**
 * Language features of every fresh context: what task programs use. Leaving out Proxy, typed
 * arrays and the big-number types roughly halves the cost of creating a context.
 */
export const SANDBOX_INTRINSICS: Intrinsics = {
  BaseObjects: true,
  Date: true,
  Eval: true,
  StringNormalize: true,
  RegExp: true,
  JSON: true,
  MapSet: true,
  Promise: true,
};

/** Interrupt polls (≈ 10 000 bytecode steps each) a run must have made before its deadline applies. */
export const MIN_POLLS = 20;
/** Past deadline × this factor a run is stopped however little it computed. */
export const HARD_DEADLINE_FACTOR = 4;
/** Promise jobs run between two checks of a run's stop (`drainJobs`). */
const JOB_BATCH = 64;

/** Why the interrupt handler stops a run now, or null to let it go on (see runSync). */
export function interruptReason(
  polls: number,
  now: number,
  deadline: number,
  hardDeadline: number,
  overMemory: boolean,
): 'deadline' | 'memory' | null {
  if (overMemory) return 'memory';
  if (now > deadline && (polls >= MIN_POLLS || now > hardDeadline)) return 'deadline';
  return null;
}

class GuestError extends Error {
  /** What the program printed before it failed (most useful when a program is broken). */
  stdout = '';

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
  if (/interrupted/i.test(message) && interrupted === 'deadline') {
    return new GuestError('timeout', 'the program ran past its deadline and was stopped');
  }
  if (/out of memory/i.test(message))
    return new GuestError(
      'memory',
      /^out of memory$/i.test(message.trim()) ? 'out of memory' : `out of memory: ${message}`,
    );
  if (/stack overflow|call stack/i.test(message))
    return new GuestError('memory', `stack limit exceeded: ${message}`);
  // A parse error's stack has no call frames; a SyntaxError thrown by running code (JSON.parse,
  // new RegExp, …) has the native or eval frame it came from.
  const stack =
    typeof (err as { stack?: unknown }).stack === 'string' ? (err as { stack: string }).stack : '';
  // Where in the program: its innermost frame (a parse error's only one).
  const at = /program\.js:(\d+):(\d+)/.exec(stack);
  const where = at ? ` (line ${at[1]}, column ${at[2]})` : '';
  if (stage === 'compile' && name === 'SyntaxError' && !/\(native\)|<eval>|<anonymous>/.test(stack)) {
    return new GuestError('syntax', `SyntaxError: ${message}${where}`);
  }
  return new GuestError('runtime', `${name ? `${name}: ${message}` : message}${where}`);
}

/**
 * A timeout's message with the deadline in it: one deadline covers every input of a run, so a
 * quick program can still time out on many inputs.
 */
function withDeadline(r: SandboxResult, deadlineMs: number, inputs: number): SandboxResult {
  if (r.error?.kind !== 'timeout') return r;
  const of = inputs <= 1 ? '' : `, one for all ${inputs} inputs together`;
  const message = r.error.message.replace('its deadline', `its deadline (${deadlineMs} ms${of})`);
  return { ...r, error: { ...r.error, message } };
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
      // QuickJS polls this handler about every 10 000 bytecode steps. A run is stopped at its
      // deadline only once it has really been computing (MIN_POLLS polls); a short program whose
      // thread was merely descheduled on a busy machine is left to finish, up to a hard cap.
      let polls = 0;
      const hardDeadline = t0 + limits.deadlineMs * HARD_DEADLINE_FACTOR;
      this.runtime.setInterruptHandler(() => {
        polls += 1;
        // Once stopped, it stays stopped: the reason is what tells a real interrupt from an error
        // the program threw with "interrupted" in its message.
        interrupt.reason ??= interruptReason(
          polls,
          performance.now(),
          deadline,
          hardDeadline,
          memory.buffer.byteLength > ceiling,
        );
        return interrupt.reason !== null;
      });
      vm = this.runtime.newContext({ intrinsics: SANDBOX_INTRINSICS });
      const result = this.execute(vm, request, limits, interrupt, hardDeadline);
      return withDeadline(
        { ...result, ms: performance.now() - t0 },
        limits.deadlineMs,
        request.inputs.length,
      );
    } catch (err) {
      if (err instanceof GuestError)
        return withDeadline(
          fail(err.kind, err.message, t0, err.stdout),
          limits.deadlineMs,
          request.inputs.length,
        );
      // The context goes before its runtime (freed the other way round, it is a use after free).
      try {
        vm?.dispose();
      } catch {
        // The runtime is rebuilt below either way.
      }
      vm = undefined;
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
        // Promise jobs a stopped run left queued would run in the next run (on its time and
        // memory): only a new runtime clears the queue.
        if (this.runtime.hasPendingJob()) this.rebuild();
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
    hardDeadline: number,
  ): Omit<SandboxResult, 'ms'> {
    const throwIfError = <T>(
      r: { error: QuickJSHandle; value?: undefined } | { value: T; error?: undefined },
      stage: 'compile' | 'run',
    ): T => {
      if (r.error) {
        const dumped: unknown = vm.dump(r.error);
        r.error.dispose();
        throw classifyThrown(dumped, stage, interrupt.reason);
      }
      return r.value as T;
    };
    const io = installHostIo(vm, req.files ?? {}, limits.outputChars);
    const intrinsics = SERIALIZE_INTRINSICS.map(([object, name]) => {
      const o = vm.getProp(vm.global, object);
      const v = vm.getProp(o, name);
      o.dispose();
      return v;
    });

    try {
      // Parsed once (a 100 KB program takes tens of ms to parse); see classifyThrown for how a
      // parse error is told apart from a SyntaxError thrown by running code.
      throwIfError(vm.evalCode(req.code, 'program.js', { type: 'global' }), 'compile').dispose();

      // `typeof f` never throws, even where no f was declared.
      const fn = throwIfError(vm.evalCode('typeof f === "undefined" ? undefined : f', 'runner.js'), 'run');
      const fType = vm.typeof(fn);
      if (fType !== 'function') {
        fn.dispose();
        throw new GuestError(
          'runtime',
          fType === 'undefined' ? 'the program defines no function f' : `f is ${fType}, not a function`,
        );
      }
      const outputs: JsonValue[] = [];
      let serializer: QuickJSHandle | undefined;
      // Parsed only when f returns an object; it is given the built-ins taken before the program ran.
      const serialize = () => {
        if (serializer) return serializer;
        const make = throwIfError(vm.evalCode(SERIALIZE_JSON, 'check.js'), 'run');
        try {
          return (serializer = throwIfError(vm.callFunction(make, vm.undefined, ...intrinsics), 'run'));
        } finally {
          make.dispose();
        }
      };
      try {
        req.inputs.forEach((input, i) => {
          const arg = toHandle(vm, input);
          const result = vm.callFunction(fn, vm.undefined, arg);
          arg.dispose();
          const out = throwIfError(result, 'run');
          try {
            outputs.push(
              readJson(vm, out, () => callLabel(input, i), serialize, limits.outputChars, interrupt),
            );
          } finally {
            out.dispose();
          }
        });
      } finally {
        fn.dispose();
        serializer?.dispose();
      }
      this.drainJobs(interrupt, hardDeadline);
      const size = JSON.stringify(outputs).length + io.chars();
      if (size > limits.outputChars || io.overflow()) {
        throw new GuestError(
          'output',
          `outputs, stdout and files are over the ${limits.outputChars}-character limit`,
        );
      }
      return { ok: true, outputs, stdout: io.stdout.join('\n'), files: Object.fromEntries(io.files) };
    } catch (err) {
      // What the program printed before it failed goes back with the error (within the limit).
      if (err instanceof GuestError && !io.overflow()) err.stdout = io.stdout.join('\n');
      throw err;
    } finally {
      for (const h of intrinsics) h.dispose();
    }
  }

  /**
   * Runs the promise jobs the program queued, a batch at a time. QuickJS turns an interrupt
   * inside a job into a rejected promise and goes on with the queue, so one call draining it all
   * never returns for a job that queues itself again (`.then(function g() { …then(g) })`). Between
   * batches the run's own stop applies: its interrupt reason, or its hard deadline for jobs too
   * short to be polled. Jobs still queued then are the run's timeout (or memory) failure.
   */
  private drainJobs(interrupt: { reason: 'deadline' | 'memory' | null }, hardDeadline: number): void {
    // Also once the queue is empty: a job the interrupt stopped ends as a rejected promise, and
    // the run must not pass as ok for it.
    for (let more = true; more;) {
      more = this.runtime.hasPendingJob();
      if (interrupt.reason === 'memory')
        throw new GuestError(
          'memory',
          'the program grew the sandbox heap past its memory limit and was stopped',
        );
      if (interrupt.reason === 'deadline' || (more && performance.now() > hardDeadline))
        throw new GuestError(
          'timeout',
          'the program ran past its deadline and was stopped (in its promise jobs)',
        );
      if (!more) break;
      const r = this.runtime.executePendingJobs(JOB_BATCH);
      if (r.error) r.error.dispose();
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

function fail(kind: SandboxErrorKind, message: string, t0: number, stdout = ''): SandboxResult {
  return { ok: false, stdout, error: { kind, message }, ms: performance.now() - t0 };
}

/** A guest value for a JSON input: primitives directly, anything else through the JSON parser. */
function toHandle(vm: QuickJSContext, v: JsonValue): QuickJSHandle {
  if (typeof v === 'number') return vm.newNumber(v);
  if (typeof v === 'string') return vm.newString(v);
  if (v === null) return vm.null;
  if (typeof v === 'boolean') return v ? vm.true : vm.false;
  const r = vm.evalCode(`(${JSON.stringify(v)})`, 'input.js');
  if (r.error) {
    r.error.dispose();
    throw new Error('an input could not be passed to the sandbox');
  }
  return r.value;
}

/**
 * Reads one output of `f` as JSON, refusing what JSON cannot carry: numbers and strings here,
 * objects through `SERIALIZE_JSON` in the sandbox. A check stopped by the run's deadline or
 * memory limit (a getter that loops) is that failure, not an output error (which would be cached).
 */
function readJson(
  vm: QuickJSContext,
  h: QuickJSHandle,
  /** Names the call in an error message: built only when there is one (every output passes here). */
  path: () => string,
  serializer: () => QuickJSHandle,
  maxChars: number,
  interrupt: { reason: 'deadline' | 'memory' | null },
): JsonValue {
  const t = vm.typeof(h);
  if (t === 'number') {
    const n = vm.getNumber(h);
    if (!Number.isFinite(n)) throw new GuestError('output', `${path()} is ${n}`);
    return n;
  }
  if (t === 'boolean') return vm.dump(h) as boolean;
  if (t === 'string') {
    const len = vm.getProp(h, 'length'); // a string's own length: no program code runs
    const n = vm.typeof(len) === 'number' ? vm.getNumber(len) : 0;
    len.dispose();
    if (n > maxChars)
      throw new GuestError('output', `${path()} is a string of ${n} characters, over the limit`);
    return vm.getString(h);
  }
  if (t === 'object') {
    const max = vm.newNumber(maxChars);
    const r = vm.callFunction(serializer(), vm.undefined, h, max);
    max.dispose();
    if (r.error) {
      const dumped: unknown = vm.dump(r.error);
      r.error.dispose();
      if (interrupt.reason !== null) throw classifyThrown(dumped, 'run', interrupt.reason);
      throw new GuestError(
        'output',
        `${path()} could not be checked: ${classifyThrown(dumped, 'run', null).message}`,
      );
    }
    const text = vm.typeof(r.value) === 'string' ? vm.getString(r.value) : '!';
    r.value.dispose();
    if (text.startsWith('!')) throw new GuestError('output', `${path()}${text.slice(1)}`);
    return JSON.parse(text.slice(1)) as JsonValue;
  }
  throw new GuestError('output', `${path()} is ${t === 'undefined' ? 'undefined' : `a ${t}`}`);
}

/** Host side of `console.log` and `fs` for one run. */
interface HostIo {
  stdout: string[];
  files: Map<string, string>;
  chars(): number;
  overflow(): boolean;
}

/**
 * Installs `console.log` (captured) and a tiny `fs` over `files` as host functions: no guest
 * code to parse per run, and nothing of the host reachable through them but these strings.
 */
function installHostIo(vm: QuickJSContext, initial: Record<string, string>, maxChars: number): HostIo {
  const stdout: string[] = [];
  const files = new Map(Object.entries(initial));
  let chars = 0;
  let overflow = false;
  const count = (n: number) => {
    chars += n;
    if (chars > maxChars) overflow = true;
    return !overflow;
  };
  const text = (h: QuickJSHandle): string => {
    if (vm.typeof(h) === 'string') return vm.getString(h);
    try {
      const dumped: unknown = vm.dump(h);
      return typeof dumped === 'string' ? dumped : (JSON.stringify(dumped) ?? String(dumped));
    } catch {
      return String(vm.typeof(h));
    }
  };
  const define = (
    target: QuickJSHandle,
    name: string,
    impl: (...args: QuickJSHandle[]) => QuickJSHandle | undefined,
  ) => {
    const fn = vm.newFunction(name, impl);
    vm.setProp(target, name, fn);
    fn.dispose();
  };
  const consoleObj = vm.newObject();
  define(consoleObj, 'log', (...args) => {
    const line = args.map(text).join(' ');
    if (count(line.length + 1)) stdout.push(line);
  });
  vm.setProp(vm.global, 'console', consoleObj);
  consoleObj.dispose();
  const fsObj = vm.newObject();
  define(fsObj, 'readFile', (name) => {
    const key = name ? text(name) : '';
    const value = files.get(key);
    if (value === undefined) throw new Error(`ENOENT: no such file ${key}`);
    return vm.newString(value);
  });
  define(fsObj, 'writeFile', (name, data) => {
    const key = name ? text(name) : '';
    const value = data ? text(data) : '';
    if (count(key.length + value.length)) files.set(key, value);
  });
  define(fsObj, 'list', () => {
    const arr = vm.newArray();
    [...files.keys()].sort().forEach((k, i) => {
      const h = vm.newString(k);
      vm.setProp(arr, i, h);
      h.dispose();
    });
    return arr;
  });
  vm.setProp(vm.global, 'fs', fsObj);
  fsObj.dispose();
  for (const [k, v] of files) count(k.length + v.length);
  return { stdout, files, chars: () => chars, overflow: () => overflow };
}
