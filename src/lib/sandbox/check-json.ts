/**
 * Checks an object or array output inside the sandbox (only parsed when `f` returns one):
 * values JSON cannot carry faithfully (undefined, NaN, ±Infinity, functions, symbols, bigints,
 * cycles, class instances such as Promises) are reported, not coerced.
 */
export const CHECK_JSON = `(v) => {
  const seen = [];
  const check = (v, path) => {
    const t = typeof v;
    if (v === null || t === 'string' || t === 'boolean') return null;
    if (t === 'number') return Number.isFinite(v) ? null : path + ' is ' + v;
    if (t !== 'object') return path + ' is ' + (t === 'undefined' ? 'undefined' : 'a ' + t);
    if (seen.includes(v)) return path + ' is a cycle';
    const proto = Object.getPrototypeOf(v);
    if (!Array.isArray(v) && proto !== Object.prototype && proto !== null) {
      return path + ' is a ' + ((proto.constructor && proto.constructor.name) || 'non-plain object');
    }
    seen.push(v);
    const keys = Array.isArray(v) ? v.map((_, i) => i) : Object.keys(v);
    for (const k of keys) { const p = check(v[k], path + '[' + JSON.stringify(k) + ']'); if (p) return p; }
    seen.pop();
    return null;
  };
  return check(v, '');
}`;
