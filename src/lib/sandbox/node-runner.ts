import { SERIALIZE_INTRINSICS, SERIALIZE_JSON } from './check-json';
import { parseJsonResult } from './json';
import type { SandboxLimits, SandboxRequest, SandboxResult } from './types';

/** Marks the result line among whatever the program prints. */
export const RESULT_MARKER = '\u0001SRL-RESULT\u0001';

/**
 * The Node.js script the WebContainer sandbox runs: the program, then a runner that calls `f`
 * on every input and prints one marked JSON line. Same output check as QuickJS (`SERIALIZE_JSON`,
 * given the built-ins as they were before the program ran).
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
const __srl_string = JSON.stringify;
const __srl_serialize = (${SERIALIZE_JSON})(${SERIALIZE_INTRINSICS.map(([o, n]) => `${o}.${n}`).join(', ')});
const __srl_report = (value) => { __srl_log(${JSON.stringify(RESULT_MARKER)} + JSON.stringify({ ...value, stdout: __srl_out.join('\\n').slice(0, ${limits.outputChars}) })); };
process.on('uncaughtException', (e) => { __srl_report({ thrown: e instanceof Error ? e.name + ': ' + e.message : 'threw a non-Error value: ' + String(e) }); process.exit(0); });
${req.code}
;(() => {
  if (typeof f !== 'function') return __srl_report({ problem: typeof f === 'undefined' ? 'the program defines no function f' : 'f is ' + typeof f + ', not a function' });
  const inputs = ${JSON.stringify(req.inputs)};
  const outputs = [];
  for (let i = 0; i < inputs.length; i++) outputs[i] = f(inputs[i]); // no Array.prototype: the program may have replaced it
  let texts = '';
  for (let i = 0; i < outputs.length; i++) {
    const t = __srl_serialize(outputs[i], ${limits.outputChars});
    if (t.charAt(0) === '!') return __srl_report({ problem: 'f(input ' + i + ')' + t.substring(1), kind: 'output' });
    texts += (i ? ',' : '') + t.substring(1);
  }
  // Built by hand from strings, as the outputs: the program may have replaced JSON, toJSON or Array.prototype.
  let stdout = '';
  for (let i = 0; i < __srl_out.length; i++) stdout += (i ? '\\n' : '') + __srl_out[i];
  const names = globalThis.fs.list();
  let files = '';
  for (let i = 0; i < names.length; i++) files += (i ? ',' : '') + __srl_string('' + names[i]) + ':' + __srl_string('' + globalThis.fs.readFile(names[i]));
  const text = '{"outputs":[' + texts + '],"stdout":' + __srl_string(stdout) + ',"files":{' + files + '}}';
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
