import { SERIALIZE_INTRINSICS, SERIALIZE_JSON } from './check-json';
import { parseJsonResult } from './json';
import { callLabel, type SandboxLimits, type SandboxRequest, type SandboxResult } from './types';

/** Marks the result line among whatever the program prints. */
export const RESULT_MARKER = '\u0001SRL-RESULT\u0001';

/**
 * The Node.js script the WebContainer sandbox runs: the program, then a runner that calls `f`
 * on every input and prints one marked JSON line. Same output check as QuickJS (`SERIALIZE_JSON`,
 * given the built-ins as they were before the program ran).
 *
 * The program runs inside a class's static block, a scope of its own where a top-level `return`
 * is still a syntax error (as in QuickJS), so that its top-level declarations (`function
 * Array() {}`, `var require`) stay its own and cannot shadow the runner's names, and
 * the runner uses only what it took before the program ran: no global, no prototype method (the
 * program may replace `String.prototype.slice`, `Array.prototype.join`, `RegExp`'s replace, an
 * array index setter, `fs.list`), only syntax, string indexing and null-prototype records.
 */
export function nodeScript(req: SandboxRequest, limits: SandboxLimits, filesDir = '/srl/files'): string {
  const dir = JSON.stringify(`${filesDir}/`);
  const marker = JSON.stringify(RESULT_MARKER);
  return `'use strict';
const __srl_fs = require('node:fs');
const __srl_readFile = __srl_fs.readFileSync;
const __srl_writeFile = __srl_fs.writeFileSync;
const __srl_readdir = __srl_fs.readdirSync;
const __srl_call = Function.prototype.call;
const __srl_sort = __srl_call.bind(Array.prototype.sort);
const __srl_slice = __srl_call.bind(String.prototype.slice);
const __srl_String = String;
const __srl_Error = Error;
const __srl_create = Object.create;
const __srl_log = console.log;
const __srl_exit = process.exit.bind(process);
const __srl_string = JSON.stringify;
const __srl_serialize = (${SERIALIZE_JSON})(${SERIALIZE_INTRINSICS.map(([o, n]) => `${o}.${n}`).join(', ')});
/** A list kept in a null-prototype record: no array method or index setter of the program's runs. */
const __srl_list = () => { const l = __srl_create(null); l.n = 0; return l; };
const __srl_add = (l, v) => { l[l.n] = v; l.n += 1; };
const __srl_joined = (l, sep) => { let t = ''; for (let i = 0; i < l.n; i++) t += (i ? sep : '') + l[i]; return t; };
const __srl_out = __srl_list();
const __srl_name = (n) => { const s = __srl_String(n); let t = ''; for (let i = 0; i < s.length; i++) t += s[i] === '/' || s[i] === '\\\\' ? '_' : s[i]; return ${dir} + t; };
const __srl_names = () => __srl_sort(__srl_readdir(${dir}));
console.log = (...args) => {
  let line = '';
  for (let i = 0; i < args.length; i++) line += (i ? ' ' : '') + (typeof args[i] === 'string' ? args[i] : __srl_string(args[i]));
  __srl_add(__srl_out, line);
};
globalThis.fs = {
  readFile: (n) => __srl_readFile(__srl_name(n), 'utf8'),
  writeFile: (n, d) => __srl_writeFile(__srl_name(n), __srl_String(d)),
  list: () => __srl_names(),
};
/** Reports a failure, \`key\` (thrown or problem) and its message, with what the program printed. */
const __srl_report = (key, message, kind) => {
  const stdout = __srl_slice(__srl_joined(__srl_out, '\\n'), 0, ${limits.outputChars});
  __srl_log(${marker} + '{"' + key + '":' + __srl_string(__srl_String(message)) + (kind ? ',"kind":"' + kind + '"' : '') + ',"stdout":' + __srl_string(stdout) + '}');
};
process.on('uncaughtException', (e) => { __srl_report('thrown', e instanceof __srl_Error ? e.name + ': ' + e.message : 'threw a non-Error value: ' + __srl_String(e)); __srl_exit(0); });
let __srl_f;
class __srl_Program { static {
${req.code}
;__srl_f = typeof f === 'undefined' ? undefined : f;
} }
(() => {
  const f = __srl_f;
  if (typeof f !== 'function') return __srl_report('problem', typeof f === 'undefined' ? 'the program defines no function f' : 'f is ' + typeof f + ', not a function');
  const inputs = ${JSON.stringify(req.inputs)};
  const labels = ${JSON.stringify(req.inputs.map((x, i) => callLabel(x, i)))};
  const outputs = __srl_list();
  for (let i = 0; i < inputs.length; i++) __srl_add(outputs, f(inputs[i]));
  let texts = '';
  for (let i = 0; i < outputs.n; i++) {
    const t = __srl_serialize(outputs[i], ${limits.outputChars});
    if (t[0] === '!') return __srl_report('problem', labels[i] + __srl_slice(t, 1), 'output');
    texts += (i ? ',' : '') + __srl_slice(t, 1);
  }
  // Built by hand from strings, as the outputs: the program may have replaced JSON, toJSON or Array.prototype.
  const stdout = __srl_joined(__srl_out, '\\n');
  const names = __srl_names();
  let files = '';
  for (let i = 0; i < names.length; i++) files += (i ? ',' : '') + __srl_string('' + names[i]) + ':' + __srl_string('' + __srl_readFile(${dir} + names[i], 'utf8'));
  const text = '{"outputs":[' + texts + '],"stdout":' + __srl_string(stdout) + ',"files":{' + files + '}}';
  if (text.length > ${limits.outputChars}) return __srl_report('problem', 'output over the size limit', 'output');
  __srl_log(${marker} + text);
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
