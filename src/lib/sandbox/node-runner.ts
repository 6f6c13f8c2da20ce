import type { SandboxLimits, SandboxRequest } from './types';

/** Marks the result line among whatever the program prints. */
export const RESULT_MARKER = '\u0001SRL-RESULT\u0001';

/**
 * The Node.js script the WebContainer sandbox runs: the program, then a runner that calls `f`
 * on every input and prints one marked JSON line. Same checks as the QuickJS runner.
 */
export function nodeScript(req: SandboxRequest, limits: SandboxLimits): string {
  return `'use strict';
const __srl_fs = require('node:fs');
const __srl_out = [];
const __srl_log = console.log;
console.log = (...args) => { __srl_out.push(args.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(' ')); };
globalThis.fs = {
  readFile: (n) => __srl_fs.readFileSync('/srl/files/' + String(n).replace(/[\\\\/]/g, '_'), 'utf8'),
  writeFile: (n, d) => __srl_fs.writeFileSync('/srl/files/' + String(n).replace(/[\\\\/]/g, '_'), String(d)),
  list: () => __srl_fs.readdirSync('/srl/files').sort(),
};
const __srl_report = (value) => { __srl_log(${JSON.stringify(RESULT_MARKER)} + JSON.stringify(value)); };
process.on('uncaughtException', (e) => { __srl_report({ thrown: e instanceof Error ? e.name + ': ' + e.message : 'threw a non-Error value: ' + String(e) }); process.exit(0); });
${req.code}
;(() => {
  if (typeof f !== 'function') return __srl_report({ problem: typeof f === 'undefined' ? 'the program defines no function f' : 'f is ' + typeof f + ', not a function' });
  const inputs = ${JSON.stringify(req.inputs)};
  const outputs = inputs.map((x) => f(x));
  const bad = outputs.findIndex((o) => { try { return JSON.stringify(o) === undefined || JSON.stringify(JSON.parse(JSON.stringify(o))) !== JSON.stringify(o) || Number.isNaN(o); } catch { return true; } });
  if (bad >= 0) return __srl_report({ problem: 'f(input ' + bad + ') cannot be sent back as JSON', kind: 'output' });
  const files = {};
  for (const n of globalThis.fs.list()) files[n] = globalThis.fs.readFile(n);
  const text = JSON.stringify({ outputs, stdout: __srl_out.join('\\n'), files });
  if (text.length > ${limits.outputChars}) return __srl_report({ problem: 'output over the size limit', kind: 'output' });
  __srl_log(${JSON.stringify(RESULT_MARKER)} + text);
})();
`;
}
