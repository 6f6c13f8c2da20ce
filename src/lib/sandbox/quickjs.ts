import type {
  Intrinsics,
  QuickJSContext,
  QuickJSHandle,
  QuickJSRuntime,
  QuickJSWASMModule,
} from 'quickjs-emscripten-core';
import { SERIALIZE_INTRINSICS, SERIALIZE_JSON } from './check-json';
import { classifyThrown, fail, GuestError, withDeadline } from './quickjs-errors';
import { installHostIo, readJson, toHandle } from './quickjs-host';
import {
  callLabel,
  type JsonValue,
  resolveLimits,
  type Sandbox,
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

export { classifyThrown };

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
