/**
 * The built-ins `SERIALIZE_JSON` is given, in its parameters' order, as global paths. A sandbox
 * takes them before the program runs: the program may replace any of them (`Number.isFinite =
 * () => true`, `Object.prototype.toJSON = …`), and the check must not see its replacements.
 */
export const SERIALIZE_INTRINSICS = [
  ['Number', 'isFinite'],
  ['Object', 'getPrototypeOf'],
  ['Array', 'isArray'],
  ['Object', 'keys'],
  ['JSON', 'stringify'],
  ['Object', 'prototype'],
  ['Object', 'create'],
] as const;

/**
 * Checks and serializes an output inside the sandbox, as a function of the built-ins above:
 * `(intrinsics…) => (value, maxChars) => text`. The text is `=` and the output's JSON, or `!` and
 * what JSON cannot carry faithfully (undefined, NaN, ±Infinity, functions, symbols, bigints,
 * cycles, class instances such as Promises) at which path, or that it is over `maxChars`.
 *
 * Every property is read once, and the JSON is built from the values read: a getter that answers
 * differently the second time, or a `toJSON` on a prototype, cannot make the output differ from
 * what was checked. The body calls no global and no prototype method (only its parameters and
 * syntax), and stores into null-prototype objects, so nothing the program replaced runs here
 * except its own getters and proxies, whose answers are what gets checked.
 */
export const SERIALIZE_JSON = `(isFinite, getProto, isArray, keys, stringify, objectProto, create) => (root, maxChars) => {
  const seen = create(null);
  let depth = 0;
  let problem = null;
  let size = 0;
  const fail = (p) => { if (problem === null) problem = p; return ''; };
  const walk = (v, path) => {
    if (problem !== null) return '';
    if (size > maxChars) return fail(' is over the ' + maxChars + '-character limit');
    const t = typeof v;
    if (v === null) { size += 4; return 'null'; }
    if (t === 'string' || t === 'boolean') { const s = stringify(v); size += s.length; return s; }
    if (t === 'number') { if (!isFinite(v)) return fail(path + ' is ' + v); const s = stringify(v); size += s.length; return s; }
    if (t !== 'object') return fail(path + ' is ' + (t === 'undefined' ? 'undefined' : 'a ' + t));
    for (let i = 0; i < depth; i++) if (seen[i] === v) return fail(path + ' is a cycle');
    const array = isArray(v);
    const proto = getProto(v);
    if (!array && proto !== objectProto && proto !== null) {
      const ctor = proto.constructor;
      const name = (typeof ctor === 'function' || (typeof ctor === 'object' && ctor !== null)) ? ctor.name : undefined;
      return fail(path + ' is a ' + (typeof name === 'string' && name !== '' ? name : 'non-plain object'));
    }
    seen[depth] = v;
    depth += 1;
    let text = array ? '[' : '{';
    if (array) {
      const n = v.length;
      for (let i = 0; i < n && problem === null; i++) {
        if (i) size += 1;
        text += (i ? ',' : '') + walk(v[i], path + '[' + i + ']');
      }
    } else {
      const ks = keys(v);
      const n = ks.length;
      for (let i = 0; i < n && problem === null; i++) {
        const k = ks[i];
        const key = stringify(k);
        size += key.length + (i ? 2 : 1); // the key, its colon and the comma before it
        text += (i ? ',' : '') + key + ':' + walk(v[k], path + '[' + key + ']');
      }
    }
    depth -= 1;
    size += 2;
    return text + (array ? ']' : '}');
  };
  const text = walk(root, '');
  if (problem === null && size > maxChars) fail(' is over the ' + maxChars + '-character limit');
  return problem === null ? '=' + text : '!' + problem;
}`;
