import type { JsonValue, SandboxErrorKind, SandboxRequest } from './types';

/** One case of the sandbox contract: a request and what must come back. */
export interface ContractCase {
  name: string;
  request: SandboxRequest;
  /** 'ok' or the error kind the run must report. */
  expect: 'ok' | SandboxErrorKind;
  /** For 'ok': the exact outputs. */
  outputs?: JsonValue[];
  /** The exact stdout (a failing run's too: what it printed before it failed). */
  stdout?: string;
  /** For an error: the exact message (what the page shows of it). */
  message?: string;
}

/** A normal program that must still succeed after every bad one. */
export const NORMAL: ContractCase = {
  name: 'normal program',
  request: { code: 'const f = (x) => x * 2 + 1', inputs: [1, 2, -3] },
  expect: 'ok',
  outputs: [3, 5, -5],
};

const hostProbe = (expr: string): SandboxRequest => ({ code: `const f = () => ${expr}`, inputs: [0] });

/** Programs a learning policy (or a user) may write, each with the outcome the contract demands. */
export const CONTRACT: ContractCase[] = [
  NORMAL,
  {
    name: 'function declaration',
    request: { code: 'function f(x) { return x % 3; }', inputs: [7, 8] },
    expect: 'ok',
    outputs: [1, 2],
  },
  {
    name: 'console.log is captured',
    request: { code: 'const f = (x) => { console.log("x is", x, { y: [x] }); return x; }', inputs: [4] },
    expect: 'ok',
    outputs: [4],
    stdout: 'x is 4 {"y":[4]}',
  },
  {
    name: 'console output before a throw is returned',
    request: {
      code: 'function f(x) { console.log("at", x); if (x > 1) throw new Error("no"); return x; }',
      inputs: [1, 2],
    },
    expect: 'runtime',
    stdout: 'at 1\nat 2',
  },
  {
    name: 'virtual file system',
    request: {
      code: 'const f = (x) => { fs.writeFile("out.txt", fs.readFile("in.txt") + x); return fs.list(); }',
      inputs: [1],
      files: { 'in.txt': 'n=' },
    },
    expect: 'ok',
    outputs: [['in.txt', 'out.txt']],
  },
  {
    name: 'reading a missing file throws',
    request: { code: 'const f = () => fs.readFile("nope")', inputs: [0] },
    expect: 'runtime',
  },
  {
    name: 'infinite loop',
    request: { code: 'const f = (x) => { while (true) {} }', inputs: [1] },
    expect: 'timeout',
  },
  {
    // QuickJS goes on with its job queue after an interrupt inside a job: this one used to hang the worker.
    name: 'a promise job that queues itself',
    request: {
      code: 'const f = (x) => { Promise.resolve().then(function g() { Promise.resolve().then(g); }); return x; }',
      inputs: [1],
    },
    expect: 'timeout',
  },
  {
    name: 'unbounded recursion',
    request: { code: 'const f = (x) => f(x + 1) + 1', inputs: [1] },
    expect: 'memory',
  },
  {
    name: 'memory bomb',
    request: {
      code: 'const f = (x) => { const a = []; while (true) a.push("m".repeat(65536) + a.length); }',
      inputs: [1],
    },
    expect: 'memory',
  },
  {
    name: 'a 100 MB string as output',
    request: { code: 'const f = () => "x".repeat(100 * 1024 * 1024)', inputs: [0] },
    expect: 'memory',
  },
  {
    name: 'an output over the size limit',
    request: { code: 'const f = () => "x".repeat(2 * 1024 * 1024)', inputs: [0] },
    expect: 'output',
  },
  {
    name: 'throwing a non-Error',
    request: { code: 'const f = () => { throw { not: "an error" }; }', inputs: [0] },
    expect: 'runtime',
  },
  { name: 'syntax error', request: { code: 'const f = (x) => x +', inputs: [0] }, expect: 'syntax' },
  {
    // The node runner once ran the program inside a function, where this returned f itself.
    name: 'a top-level return is a syntax error',
    request: { code: 'return (x) => x + 1', inputs: [0] },
    expect: 'syntax',
  },
  {
    name: 'a SyntaxError thrown by running code is a runtime error',
    request: { code: 'JSON.parse("{"); const f = (x) => x', inputs: [0] },
    expect: 'runtime',
  },
  { name: 'missing f', request: { code: 'const g = (x) => x', inputs: [0] }, expect: 'runtime' },
  { name: 'f not a function', request: { code: 'const f = 42', inputs: [0] }, expect: 'runtime' },
  { name: 'fetch', request: hostProbe('fetch("http://127.0.0.1/")'), expect: 'runtime' },
  { name: 'XMLHttpRequest', request: hostProbe('new XMLHttpRequest()'), expect: 'runtime' },
  { name: 'postMessage', request: hostProbe('postMessage("hi")'), expect: 'runtime' },
  { name: 'indexedDB', request: hostProbe('indexedDB.open("x")'), expect: 'runtime' },
  { name: 'importScripts', request: hostProbe('importScripts("x.js")'), expect: 'runtime' },
  { name: 'require', request: hostProbe('require("fs")'), expect: 'runtime' },
  { name: 'process', request: hostProbe('process.exit(1)'), expect: 'runtime' },
  {
    name: 'globalThis.constructor reaches only the sandbox',
    request: hostProbe(
      '[typeof globalThis.constructor.constructor("return this")().self, typeof document, typeof setTimeout]',
    ),
    expect: 'ok',
    outputs: [['undefined', 'undefined', 'undefined']],
  },
  {
    name: 'dynamic import()',
    request: hostProbe('import("data:text/javascript,export default 1")'),
    expect: 'output',
  },
  {
    name: 'polluting Object.prototype and globals',
    request: {
      code: 'Object.prototype.polluted = 1; globalThis.leak = 2; Array.prototype.map = null; const f = () => 1',
      inputs: [0],
    },
    expect: 'ok',
    outputs: [1],
  },
  {
    name: 'the next run is clean',
    request: { code: 'const f = () => [typeof ({}).polluted, typeof leak, typeof [].map]', inputs: [0] },
    expect: 'ok',
    outputs: [['undefined', 'undefined', 'function']],
  },
  {
    name: 'a 100 KB program',
    request: {
      code: `const table = [${Array.from({ length: 20000 }, (_, i) => i % 97).join(',')}];\nconst f = (x) => table[x]`,
      inputs: [0, 98],
    },
    expect: 'ok',
    outputs: [0, 1],
  },
  { name: 'undefined output', request: hostProbe('undefined'), expect: 'output' },
  { name: 'NaN output', request: hostProbe('NaN'), expect: 'output' },
  {
    name: 'a failing call named by its input',
    request: { code: 'const f = (x) => (x > 1 ? x / 0 : x)', inputs: [1, 2, 4] },
    expect: 'output',
    message: 'f(2) is Infinity',
  },
  { name: 'function output', request: hostProbe('() => 1'), expect: 'output' },
  {
    name: 'cyclic output',
    request: hostProbe('(() => { const a = {}; a.self = a; return a; })()'),
    expect: 'output',
  },
  // The output check must not use what the program replaced, nor read a value twice.
  {
    name: 'a replaced Number.isFinite does not let NaN through',
    request: { code: 'Number.isFinite = () => true; const f = () => [NaN]', inputs: [0] },
    expect: 'output',
  },
  {
    name: 'a toJSON on Object.prototype does not change an output',
    request: {
      code: 'Object.prototype.toJSON = function () { return 7; }; JSON.stringify = () => "[7]"; const f = () => ({ a: [1, { b: "c" }] })',
      inputs: [0],
    },
    expect: 'ok',
    outputs: [{ a: [1, { b: 'c' }] }],
  },
  {
    name: 'a getter is read once: the output is what was checked',
    request: { code: 'let n = 0; const f = () => ({ get a() { return n++ ? NaN : 1; } })', inputs: [0] },
    expect: 'ok',
    outputs: [{ a: 1 }],
  },
  {
    name: 'replaced Array.prototype methods do not hide a cycle',
    request: {
      code: 'Array.prototype.includes = () => false; Array.prototype.push = () => 0; Object.keys = () => []; const f = () => { const a = {}; a.self = a; return a; }',
      inputs: [0],
    },
    expect: 'output',
  },
  {
    // In the node runner a declaration at the program's top level shadowed the runner's own
    // names (the script is one module): `function Array() {}` broke every object output.
    name: 'built-ins the program declares over do not break the runner',
    request: {
      code: 'function Array() {} function JSON() {} function Object() {} function String() {} function console() {} var Number = 1; var process = 2; var require = 3; const f = (x) => ({ a: [x, "s"] })',
      inputs: [1],
    },
    expect: 'ok',
    outputs: [{ a: [1, 's'] }],
  },
  {
    name: 'replaced string and array methods do not change what the runner reports',
    request: {
      code: 'String.prototype.charAt = () => "!"; String.prototype.substring = () => ""; String.prototype.slice = () => ""; String.prototype.replace = () => "../x"; RegExp.prototype[Symbol.replace] = () => "../x"; Array.prototype.join = () => "?"; Array.prototype.push = () => 0; Array.prototype.map = () => []; Array.prototype.sort = function () { return this; }; Object.defineProperty(Array.prototype, "0", { set() {}, configurable: true }); globalThis.fs.list = () => ["forged"]; const f = (x) => { console.log("at", x); fs.writeFile("b.txt", "B"); fs.writeFile("a.txt", "A"); return [x, fs.list()]; }',
      inputs: [1],
    },
    expect: 'ok',
    outputs: [[1, ['forged']]],
    stdout: 'at 1',
  },
  {
    name: 'an error the program throws saying "interrupted" is its own runtime error',
    request: {
      code: 'const f = () => { throw new (globalThis.InternalError || Error)("interrupted"); }',
      inputs: [0],
    },
    expect: 'runtime',
  },
];

/**
 * Cases about reaching the host. A full Node.js runtime (the WebContainer sandbox) is allowed
 * those capabilities by design, so its contract leaves them out.
 */
export const HOST_ACCESS_CASES: ReadonlySet<string> = new Set([
  'fetch',
  'XMLHttpRequest',
  'postMessage',
  'indexedDB',
  'importScripts',
  'require',
  'process',
  'globalThis.constructor reaches only the sandbox',
]);
