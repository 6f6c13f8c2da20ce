import type { QuickJSContext, QuickJSRuntime, QuickJSWASMModule } from 'quickjs-emscripten-core';
import {
  classifyThrown,
  HARD_DEADLINE_FACTOR,
  interruptReason,
  SANDBOX_INTRINSICS,
} from '../sandbox/quickjs';
import { resolveLimits, type JsonValue, type SandboxErrorKind, type SandboxLimits } from '../sandbox/types';

/** A failure inside a session: the sandbox's error kinds, and a message for the page. */
export class SessionError extends Error {
  constructor(
    readonly kind: SandboxErrorKind,
    message: string,
  ) {
    super(message);
  }
}

/** The environment's file name in QuickJS stacks. */
const ENV_FILE = 'env.js';

/** ` (line L, column C)` of the innermost frame in the environment's code, if a stack has one. */
export function whereInEnv(dumped: unknown): string {
  const stack = (dumped as { stack?: unknown } | null)?.stack;
  const at = typeof stack === 'string' ? /env\.js:(\d+):(\d+)/.exec(stack) : null;
  return at ? ` (line ${at[1]}, column ${at[2]})` : '';
}

/**
 * A long-lived QuickJS context for code that keeps state between calls (a custom JS
 * environment's `reset()` / `step(a)`, DESIGN §3): the code is evaluated once, then each `call`
 * evaluates one expression with its own deadline and returns its value as JSON. It has its own
 * runtime with the same limits and no host capability (not even `console.log`).
 */
export class QuickJSSession {
  private readonly runtime: QuickJSRuntime;
  private readonly vm: QuickJSContext;
  private readonly limits: SandboxLimits;
  private interrupted: 'deadline' | 'memory' | null = null;
  private deadline = 0;
  private hardDeadline = 0;
  private polls = 0;
  /** The wasm heap this session may grow to: its size when the session began plus the memory limit. */
  private readonly memory: WebAssembly.Memory;
  private readonly ceiling: number;

  constructor(module: QuickJSWASMModule, code: string, limits: Partial<SandboxLimits> = {}) {
    this.limits = resolveLimits(limits);
    // QuickJS's own accounting misses some allocations (a filled array, a string built piece by
    // piece): the session also stops once the wasm heap has grown by more than the limit since it
    // began. The heap never shrinks, so this bounds what the environment keeps over all its calls.
    this.memory = module.getWasmMemory();
    this.ceiling = this.memory.buffer.byteLength + this.limits.memoryBytes;
    this.runtime = module.newRuntime();
    this.runtime.setMemoryLimit(this.limits.memoryBytes);
    this.runtime.setMaxStackSize(this.limits.stackBytes);
    this.runtime.setInterruptHandler(() => {
      this.polls += 1;
      this.interrupted = interruptReason(
        this.polls,
        performance.now(),
        this.deadline,
        this.hardDeadline,
        this.memory.buffer.byteLength > this.ceiling,
      );
      return this.interrupted !== null;
    });
    this.vm = this.runtime.newContext({ intrinsics: SANDBOX_INTRINSICS });
    try {
      this.evaluate(code, 'compile', ENV_FILE);
    } catch (err) {
      this.dispose();
      throw err;
    }
  }

  /** Evaluates `expression` and returns its value through JSON (undefined becomes null). */
  call(expression: string): JsonValue {
    const text = this.evaluate(`JSON.stringify(${expression}) ?? 'null'`, 'run', 'call.js');
    if (typeof text !== 'string') throw new SessionError('output', `${expression} did not give JSON`);
    if (text.length > this.limits.outputChars)
      throw new SessionError(
        'output',
        `${expression} returned more than ${this.limits.outputChars} characters`,
      );
    return JSON.parse(text) as JsonValue;
  }

  private evaluate(code: string, stage: 'compile' | 'run', file: string): unknown {
    this.polls = 0;
    this.interrupted = null;
    const t0 = performance.now();
    this.deadline = t0 + this.limits.deadlineMs;
    this.hardDeadline = t0 + this.limits.deadlineMs * HARD_DEADLINE_FACTOR;
    const r = this.vm.evalCode(code, file, { type: 'global' });
    if (r.error) {
      const dumped: unknown = this.vm.dump(r.error);
      r.error.dispose();
      const e = classifyThrown(dumped, stage, this.interrupted);
      // A call's deadline is the session's own: the message says what it is. An error in the
      // environment's own code says where.
      const message =
        e.kind === 'timeout'
          ? `ran past its ${this.limits.deadlineMs} ms deadline and was stopped`
          : `${e.message}${whereInEnv(dumped)}`;
      throw new SessionError(e.kind, message);
    }
    const value: unknown = this.vm.dump(r.value);
    r.value.dispose();
    // A call that grew the heap a little each time is stopped here, between calls.
    if (this.memory.buffer.byteLength > this.ceiling)
      throw new SessionError(
        'memory',
        `the environment grew the sandbox heap past its ${Math.round(this.limits.memoryBytes / 2 ** 20)} MiB memory limit and was stopped`,
      );
    return value;
  }

  dispose(): void {
    try {
      this.vm.dispose();
      this.runtime.dispose();
    } catch {
      // A runtime broken by a failed call may not free cleanly; it is dropped either way.
    }
  }
}
