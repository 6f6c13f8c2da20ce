/**
 * How a QuickJS run fails: the error a guest throw, a deadline or a memory limit becomes, and
 * the failed `SandboxResult` it is reported as.
 */
import type { SandboxErrorKind, SandboxResult } from './types';

/** A failure of the guest program (not of the host), with its kind. */
export class GuestError extends Error {
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
export function withDeadline(r: SandboxResult, deadlineMs: number, inputs: number): SandboxResult {
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

/** A failed run's result. */
export function fail(kind: SandboxErrorKind, message: string, t0: number, stdout = ''): SandboxResult {
  return { ok: false, stdout, error: { kind, message }, ms: performance.now() - t0 };
}
