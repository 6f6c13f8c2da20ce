import { CHECK_JSON } from './check-json';
import { parseJsonResult } from './json';
import type { SandboxLimits, SandboxRequest, SandboxResult } from './types';

/** Marks the result line among whatever the program prints. */
export const RESULT_MARKER = '\u0001SRL-RESULT\u0001';

/**
 * The Node.js script the WebContainer sandbox runs: the program, then a runner that calls `f`
 * on every input and prints one marked JSON line. Same output check as QuickJS (`CHECK_JSON`).
 */
export function nodeScript(req: SandboxRequest, limits: SandboxLimits, filesDir = '/srl/files'): string {
  const dir = JSON.stringify(`${filesDir}/`);
  return `'use strict';
const __srl_fs = require('node:fs');
const __srl_out = [];
const __srl_log = console.log;
console.log = (...args) => { __srl_out.push(args.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(' ')); };
globalThis.fs = {
  readFile: (n) => __srl_fs.readFileSync(${dir} + String(n).replace(/[\\\\/]/g, '_'), 'utf8'),
  writeFile: (n, d) => __srl_fs.writeFileSync(${dir} + String(n).replace(/[\\\\/]/g, '_'), String(d)),
  list: () => __srl_fs.readdirSync(${dir}).sort(),
};
const __srl_report = (value) => { __srl_log(${JSON.stringify(RESULT_MARKER)} + JSON.stringify({ ...value, stdout: __srl_out.join('\\n').slice(0, ${limits.outputChars}) })); };
process.on('uncaughtException', (e) => { __srl_report({ thrown: e instanceof Error ? e.name + ': ' + e.message : 'threw a non-Error value: ' + String(e) }); process.exit(0); });
${req.code}
;(() => {
  if (typeof f !== 'function') return __srl_report({ problem: typeof f === 'undefined' ? 'the program defines no function f' : 'f is ' + typeof f + ', not a function' });
  const inputs = ${JSON.stringify(req.inputs)};
  const outputs = [];
  for (let i = 0; i < inputs.length; i++) outputs[i] = f(inputs[i]); // no Array.prototype: the program may have replaced it
  const check = ${CHECK_JSON};
  for (let i = 0; i < outputs.length; i++) {
    const p = check(outputs[i]);
    if (p) return __srl_report({ problem: 'f(input ' + i + ')' + p, kind: 'output' });
  }
  const files = {};
  for (const n of globalThis.fs.list()) files[n] = globalThis.fs.readFile(n);
  const text = JSON.stringify({ outputs, stdout: __srl_out.join('\\n'), files });
  if (text.length > ${limits.outputChars}) return __srl_report({ problem: 'output over the size limit', kind: 'output' });
  __srl_log(${JSON.stringify(RESULT_MARKER)} + text);
})();
`;
}

/** Reads what the node script printed (and its exit code) into a sandbox result. */
export function readNodeOutput(
  text: string,
  exitCode: number,
  inputCount: number,
): Omit<SandboxResult, 'ms'> {
  const line = text.split(/\r?\n/).find((l) => l.startsWith(RESULT_MARKER));
  if (!line) {
    const kind = /SyntaxError/.test(text)
      ? 'syntax'
      : /heap out of memory|Maximum call stack/.test(text)
        ? 'memory'
        : 'runtime';
    return {
      ok: false,
      stdout: '',
      error: { kind, message: text.trim().slice(-500) || `node exited with code ${exitCode}` },
    };
  }
  const payload = line.slice(RESULT_MARKER.length);
  if (payload.startsWith('{"thrown":')) {
    // What it printed before it threw comes back with the error, as from QuickJS.
    const { thrown, stdout } = JSON.parse(payload) as { thrown: string; stdout?: unknown };
    return {
      ok: false,
      stdout: typeof stdout === 'string' ? stdout : '',
      error: { kind: 'runtime', message: thrown },
    };
  }
  return parseJsonResult(payload, inputCount);
}
