/** A JSON value: what a program may return from `f` and what crosses back to the host. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Why a run failed (DESIGN §8). */
export type SandboxErrorKind = 'syntax' | 'runtime' | 'timeout' | 'memory' | 'output' | 'internal';

export const ERROR_KINDS: readonly SandboxErrorKind[] = [
  'syntax',
  'runtime',
  'timeout',
  'memory',
  'output',
  'internal',
];

/** Limits of one run; every field has a default (`DEFAULT_LIMITS`). */
export interface SandboxLimits {
  /** Wall-clock budget for the whole run (program + every call of `f`), in ms. */
  deadlineMs: number;
  /** Heap limit of the interpreter, in bytes. */
  memoryBytes: number;
  /** Stack limit of the interpreter, in bytes. */
  stackBytes: number;
  /** Largest serialised size of outputs + stdout + files allowed back, in characters. */
  outputChars: number;
}

export const DEFAULT_LIMITS: SandboxLimits = {
  deadlineMs: 50,
  memoryBytes: 16 * 1024 * 1024,
  stackBytes: 128 * 1024,
  outputChars: 1024 * 1024,
};

/** One request: JavaScript source that defines `f`, called as `f(input)` for each input, in order. */
export interface SandboxRequest {
  code: string;
  inputs: JsonValue[];
  /** Files the program can read through `fs` (name → text). */
  files?: Record<string, string>;
  limits?: Partial<SandboxLimits>;
}

/**
 * How an error names the call of `f` on input `i`: by its value when that is short (`f(2)`,
 * `f("ab")`), by its place otherwise (`f(input 3)`, counting from 0).
 */
export function callLabel(input: JsonValue, i: number): string {
  const scalar = input === null || typeof input !== 'object';
  // A long string is named by its place without writing all of it out first.
  const short = scalar && (typeof input !== 'string' || input.length <= 22);
  const text = short ? JSON.stringify(input) : '';
  return short && text.length <= 24 ? `f(${text})` : `f(input ${i})`;
}

/** Outcome of a run. `outputs` is present exactly when `ok`. */
export interface SandboxResult {
  ok: boolean;
  outputs?: JsonValue[];
  /** What the program printed with `console.log`, one line per call. */
  stdout: string;
  /** The virtual file system after the run. */
  files?: Record<string, string>;
  error?: { kind: SandboxErrorKind; message: string };
  /** Wall milliseconds of the run, host side (0 when it came from the result cache). */
  ms: number;
  /** True when the result cache answered: the program was not run again. */
  cached?: boolean;
}

/** Which sandbox implementation runs programs. */
export type SandboxKind = 'quickjs' | 'webcontainer';

/** The one interface every sandbox implements (DESIGN §8). */
export interface Sandbox {
  readonly kind: SandboxKind;
  run(request: SandboxRequest): Promise<SandboxResult>;
  dispose(): void;
}

/** Limits with defaults filled in, each checked to be a positive finite number. */
export function resolveLimits(partial: Partial<SandboxLimits> = {}): SandboxLimits {
  const limits = { ...DEFAULT_LIMITS, ...partial };
  for (const [k, v] of Object.entries(limits)) {
    if (!Number.isFinite(v) || v <= 0)
      throw new Error(`sandbox limit ${k} must be a positive number, got ${v}`);
  }
  return limits;
}
