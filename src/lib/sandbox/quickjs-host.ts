/**
 * The host side of a QuickJS run: inputs passed into the guest, its outputs read back as JSON,
 * and `console.log` and `fs` as host functions.
 */
import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten-core';
import { classifyThrown, GuestError } from './quickjs-errors';
import type { JsonValue } from './types';

/** A guest value for a JSON input: primitives directly, anything else through the JSON parser. */
export function toHandle(vm: QuickJSContext, v: JsonValue): QuickJSHandle {
  if (typeof v === 'number') return vm.newNumber(v);
  if (typeof v === 'string') return vm.newString(v);
  if (v === null) return vm.null;
  if (typeof v === 'boolean') return v ? vm.true : vm.false;
  const r = vm.evalCode(`(${JSON.stringify(v)})`, 'input.js');
  if (r.error) {
    r.error.dispose();
    throw new Error('an input could not be passed to the sandbox');
  }
  return r.value;
}

/**
 * Reads one output of `f` as JSON, refusing what JSON cannot carry: numbers and strings here,
 * objects through `SERIALIZE_JSON` in the sandbox. A check stopped by the run's deadline or
 * memory limit (a getter that loops) is that failure, not an output error (which would be cached).
 */
export function readJson(
  vm: QuickJSContext,
  h: QuickJSHandle,
  /** Names the call in an error message: built only when there is one (every output passes here). */
  path: () => string,
  serializer: () => QuickJSHandle,
  maxChars: number,
  interrupt: { reason: 'deadline' | 'memory' | null },
): JsonValue {
  const t = vm.typeof(h);
  if (t === 'number') {
    const n = vm.getNumber(h);
    if (!Number.isFinite(n)) throw new GuestError('output', `${path()} is ${n}`);
    return n;
  }
  if (t === 'boolean') return vm.dump(h) as boolean;
  if (t === 'string') {
    const len = vm.getProp(h, 'length'); // a string's own length: no program code runs
    const n = vm.typeof(len) === 'number' ? vm.getNumber(len) : 0;
    len.dispose();
    if (n > maxChars)
      throw new GuestError('output', `${path()} is a string of ${n} characters, over the limit`);
    return vm.getString(h);
  }
  if (t === 'object') {
    const max = vm.newNumber(maxChars);
    const r = vm.callFunction(serializer(), vm.undefined, h, max);
    max.dispose();
    if (r.error) {
      const dumped: unknown = vm.dump(r.error);
      r.error.dispose();
      if (interrupt.reason !== null) throw classifyThrown(dumped, 'run', interrupt.reason);
      throw new GuestError(
        'output',
        `${path()} could not be checked: ${classifyThrown(dumped, 'run', null).message}`,
      );
    }
    const text = vm.typeof(r.value) === 'string' ? vm.getString(r.value) : '!';
    r.value.dispose();
    if (text.startsWith('!')) throw new GuestError('output', `${path()}${text.slice(1)}`);
    return JSON.parse(text.slice(1)) as JsonValue;
  }
  throw new GuestError('output', `${path()} is ${t === 'undefined' ? 'undefined' : `a ${t}`}`);
}

/** Host side of `console.log` and `fs` for one run. */
export interface HostIo {
  stdout: string[];
  files: Map<string, string>;
  chars(): number;
  overflow(): boolean;
}

/**
 * Installs `console.log` (captured) and a tiny `fs` over `files` as host functions: no guest
 * code to parse per run, and nothing of the host reachable through them but these strings.
 */
export function installHostIo(vm: QuickJSContext, initial: Record<string, string>, maxChars: number): HostIo {
  const stdout: string[] = [];
  const files = new Map(Object.entries(initial));
  let chars = 0;
  let overflow = false;
  const count = (n: number) => {
    chars += n;
    if (chars > maxChars) overflow = true;
    return !overflow;
  };
  const text = (h: QuickJSHandle): string => {
    if (vm.typeof(h) === 'string') return vm.getString(h);
    try {
      const dumped: unknown = vm.dump(h);
      return typeof dumped === 'string' ? dumped : (JSON.stringify(dumped) ?? String(dumped));
    } catch {
      return String(vm.typeof(h));
    }
  };
  const define = (
    target: QuickJSHandle,
    name: string,
    impl: (...args: QuickJSHandle[]) => QuickJSHandle | undefined,
  ) => {
    const fn = vm.newFunction(name, impl);
    vm.setProp(target, name, fn);
    fn.dispose();
  };
  const consoleObj = vm.newObject();
  define(consoleObj, 'log', (...args) => {
    const line = args.map(text).join(' ');
    if (count(line.length + 1)) stdout.push(line);
  });
  vm.setProp(vm.global, 'console', consoleObj);
  consoleObj.dispose();
  const fsObj = vm.newObject();
  define(fsObj, 'readFile', (name) => {
    const key = name ? text(name) : '';
    const value = files.get(key);
    if (value === undefined) throw new Error(`ENOENT: no such file ${key}`);
    return vm.newString(value);
  });
  define(fsObj, 'writeFile', (name, data) => {
    const key = name ? text(name) : '';
    const value = data ? text(data) : '';
    if (count(key.length + value.length)) files.set(key, value);
  });
  define(fsObj, 'list', () => {
    const arr = vm.newArray();
    [...files.keys()].sort().forEach((k, i) => {
      const h = vm.newString(k);
      vm.setProp(arr, i, h);
      h.dispose();
    });
    return arr;
  });
  vm.setProp(vm.global, 'fs', fsObj);
  fsObj.dispose();
  for (const [k, v] of files) count(k.length + v.length);
  return { stdout, files, chars: () => chars, overflow: () => overflow };
}
