import type { JsonValue, SandboxResult } from './types';

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Reads what a sandboxed runner sent back. The text comes from untrusted code (it can replace
 * any built-in it likes), so every field is checked here, on the host.
 */
export function parseJsonResult(text: string, inputCount: number): Omit<SandboxResult, 'ms'> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return {
      ok: false,
      stdout: '',
      error: { kind: 'output', message: 'the program’s result is not valid JSON' },
    };
  }
  if (!isRecord(parsed))
    return { ok: false, stdout: '', error: { kind: 'output', message: 'malformed result' } };
  if (typeof parsed.problem === 'string') {
    return {
      ok: false,
      stdout: typeof parsed.stdout === 'string' ? parsed.stdout : '',
      error: { kind: parsed.kind === 'output' ? 'output' : 'runtime', message: parsed.problem },
    };
  }
  const { outputs, stdout, files } = parsed;
  if (!Array.isArray(outputs) || outputs.length !== inputCount) {
    return { ok: false, stdout: '', error: { kind: 'output', message: `expected ${inputCount} outputs` } };
  }
  if (
    typeof stdout !== 'string' ||
    !isRecord(files) ||
    !Object.values(files).every((v) => typeof v === 'string')
  ) {
    return { ok: false, stdout: '', error: { kind: 'output', message: 'malformed stdout or files' } };
  }
  return { ok: true, outputs: outputs as JsonValue[], stdout, files: files as Record<string, string> };
}
