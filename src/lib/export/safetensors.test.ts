import { describe, expect, it } from 'vitest';
import { f32Tensor, f32Values, readSafetensors, writeSafetensors, type RawTensor } from './safetensors';

/** A file with `header` as its JSON (unpadded) and `data` after it. */
function rawFile(header: unknown, data: Uint8Array = new Uint8Array(0), headerText?: string): Uint8Array {
  const json = new TextEncoder().encode(headerText ?? JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

const headerOf = (file: Uint8Array) => {
  const n = Number(new DataView(file.buffer, file.byteOffset).getBigUint64(0, true));
  return { n, text: new TextDecoder().decode(file.subarray(8, 8 + n)) };
};

const i64 = (values: bigint[]): RawTensor => {
  const bytes = new Uint8Array(values.length * 8);
  values.forEach((v, i) => new DataView(bytes.buffer).setBigInt64(i * 8, v, true));
  return { dtype: 'I64', shape: [values.length], bytes };
};

describe('writeSafetensors', () => {
  it('writes the length, a space-padded JSON header and the raw little-endian data, aligned to 8', () => {
    const file = writeSafetensors(new Map([['a', f32Tensor([2], new Float32Array([1, -2]))]]), {
      format: 'pt',
    });
    const { n, text } = headerOf(file);
    expect((8 + n) % 8).toBe(0);
    expect(text.trimEnd()).toBe(
      '{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}',
    );
    expect(/^ *$/.test(text.slice(text.trimEnd().length))).toBe(true);
    // 1.0f and -2.0f, little-endian.
    expect([...file.subarray(8 + n)]).toEqual([0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0]);
    expect(file.length).toBe(8 + n + 8);
  });

  it('lays wider elements first so every tensor starts aligned to its element size, offsets back to back', () => {
    const tensors = new Map<string, RawTensor>([
      ['bytes', { dtype: 'U8', shape: [3], bytes: new Uint8Array([7, 8, 9]) }],
      ['floats', f32Tensor([2, 2], new Float32Array([1, 2, 3, 4]))],
      ['longs', i64([5n, -6n])],
    ]);
    const file = writeSafetensors(tensors);
    const header = JSON.parse(headerOf(file).text) as Record<string, { data_offsets: [number, number] }>;
    expect(Object.keys(header)).toEqual(['longs', 'floats', 'bytes']);
    expect(header.longs?.data_offsets).toEqual([0, 16]);
    expect(header.floats?.data_offsets).toEqual([16, 32]);
    expect(header.bytes?.data_offsets).toEqual([32, 35]);
    const back = readSafetensors(file);
    expect(f32Values(back.tensors.get('floats') as RawTensor)).toEqual(new Float32Array([1, 2, 3, 4]));
    expect([...(back.tensors.get('bytes')?.bytes ?? [])]).toEqual([7, 8, 9]);
    const longs = back.tensors.get('longs') as RawTensor;
    expect(new DataView(longs.bytes.buffer, longs.bytes.byteOffset).getBigInt64(8, true)).toBe(-6n);
    expect(back.metadata).toEqual({});
  });

  it('round-trips a scalar, an empty tensor and metadata', () => {
    const file = writeSafetensors(
      new Map([
        ['s', f32Tensor([], new Float32Array([3.5]))],
        ['e', f32Tensor([0, 4], new Float32Array(0))],
      ]),
      { format: 'pt', note: 'x' },
    );
    const back = readSafetensors(file);
    expect(back.tensors.get('s')?.shape).toEqual([]);
    expect(f32Values(back.tensors.get('s') as RawTensor)[0]).toBe(3.5);
    expect(back.tensors.get('e')?.bytes.byteLength).toBe(0);
    expect(back.metadata).toEqual({ format: 'pt', note: 'x' });
  });

  it('refuses metadata that is not a string and data that does not fill its shape', () => {
    const meta = { n: 1 } as unknown as Record<string, string>;
    expect(() => writeSafetensors(new Map(), meta)).toThrow(/strings only/);
    const short: RawTensor = { dtype: 'F32', shape: [3], bytes: new Uint8Array(8) };
    expect(() => writeSafetensors(new Map([['w', short]]))).toThrow(
      /w: 8 bytes, its F32 shape \[3\] needs 12/,
    );
  });
});

/**
 * What the Python library (safetensors 0.8.0) writes for `save({'b': uint8 [1, 2, 3], 'a': float32
 * [[1.5, -2]], 'c': int64 [7]}, metadata={'format': 'pt'})`.
 */
const PYTHON_WRITTEN =
  'yAAAAAAAAAB7Il9fbWV0YWRhdGFfXyI6eyJmb3JtYXQiOiJwdCJ9LCJjIjp7ImR0eXBlIjoiSTY0Iiwic2hhcGUiOlsxXSwiZGF0YV9vZmZzZXRzIjpbMCw4XX0sImEiOnsiZHR5cGUiOiJGMzIiLCJzaGFwZSI6WzEsMl0sImRhdGFfb2Zmc2V0cyI6WzgsMTZdfSwiYiI6eyJkdHlwZSI6IlU4Iiwic2hhcGUiOlszXSwiZGF0YV9vZmZzZXRzIjpbMTYsMTldfX0gICAgIAcAAAAAAAAAAADAPwAAAMABAgM=';

describe('against the Python library', () => {
  const python = Uint8Array.from(atob(PYTHON_WRITTEN), (c) => c.charCodeAt(0));

  it('reads the file it writes', () => {
    const { tensors, metadata } = readSafetensors(python);
    expect(metadata).toEqual({ format: 'pt' });
    expect(f32Values(tensors.get('a') as RawTensor)).toEqual(new Float32Array([1.5, -2]));
    expect(tensors.get('a')?.shape).toEqual([1, 2]);
    expect([...(tensors.get('b')?.bytes ?? [])]).toEqual([1, 2, 3]);
    expect(tensors.get('c')?.dtype).toBe('I64');
  });

  it('writes the same bytes for the same tensors', () => {
    const ours = writeSafetensors(
      new Map<string, RawTensor>([
        ['b', { dtype: 'U8', shape: [3], bytes: new Uint8Array([1, 2, 3]) }],
        ['a', f32Tensor([1, 2], new Float32Array([1.5, -2]))],
        ['c', i64([7n])],
      ]),
      { format: 'pt' },
    );
    expect([...ours]).toEqual([...python]);
  });
});

describe('readSafetensors', () => {
  const good = writeSafetensors(new Map([['w', f32Tensor([2, 3], new Float32Array([1, 2, 3, 4, 5, 6]))]]));

  it('refuses a truncated file, wherever it is cut', () => {
    expect(() => readSafetensors(good.subarray(0, 5), 'm.safetensors')).toThrow(
      /m.safetensors is truncated: 5 bytes/,
    );
    expect(() => readSafetensors(good.subarray(0, 20))).toThrow(/truncated: its header says \d+ bytes/);
    expect(() => readSafetensors(good.subarray(0, good.length - 1))).toThrow(
      /truncated: its tensors need 24 bytes of data, the file has 23/,
    );
  });

  it('refuses a header that is not JSON, not an object or not starting with {', () => {
    expect(() => readSafetensors(rawFile(null, undefined, '{"w": '))).toThrow(/header is not JSON/);
    expect(() => readSafetensors(rawFile(null, undefined, ' {}'))).toThrow(/does not start with "\{"/);
    expect(() => readSafetensors(rawFile(null, undefined, '[1]'))).toThrow(/does not start with/);
    const bad = rawFile({});
    bad[8 + 1] = 0xff;
    expect(() => readSafetensors(bad)).toThrow(/not UTF-8/);
    const huge = new Uint8Array(16);
    new DataView(huge.buffer).setBigUint64(0, 2n ** 40n, true);
    expect(() => readSafetensors(huge)).toThrow(/header length \d+ exceeds/);
  });

  it('refuses metadata that holds anything but strings', () => {
    expect(() => readSafetensors(rawFile({ __metadata__: { step: 3 } }))).toThrow(
      /metadata step is 3; .*strings only/,
    );
    expect(() => readSafetensors(rawFile({ __metadata__: ['a'] }))).toThrow(/__metadata__ is not an object/);
  });

  it('refuses unknown dtypes, bad shapes and offsets that do not match the size', () => {
    const d = new Uint8Array(8);
    expect(() =>
      readSafetensors(rawFile({ w: { dtype: 'F33', shape: [2], data_offsets: [0, 8] } }, d)),
    ).toThrow(/w has unknown dtype "F33"/);
    expect(() =>
      readSafetensors(rawFile({ w: { dtype: 'F32', shape: [-2], data_offsets: [0, 8] } }, d)),
    ).toThrow(/shape \[-2\]/);
    expect(() =>
      readSafetensors(rawFile({ w: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } }, d)),
    ).toThrow(/w spans 8 bytes, its F32 shape \[3\] needs 12/);
    expect(() =>
      readSafetensors(rawFile({ w: { dtype: 'F32', shape: [2], data_offsets: [8, 0] } }, d)),
    ).toThrow(/data_offsets \[8,0\]/);
  });

  it('refuses data with a hole, an overlap or trailing bytes', () => {
    const f = (begin: number) => ({ dtype: 'F32', shape: [1], data_offsets: [begin, begin + 4] });
    expect(() => readSafetensors(rawFile({ a: f(0), b: f(8) }, new Uint8Array(12)))).toThrow(
      /bytes 4–8 of the data belong to no tensor \(before b\)/,
    );
    expect(() =>
      readSafetensors(
        rawFile({ a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] }, b: f(4) }, new Uint8Array(8)),
      ),
    ).toThrow(/b overlaps/);
    expect(() => readSafetensors(rawFile({ a: f(0) }, new Uint8Array(6)))).toThrow(
      /2 bytes after the last tensor/,
    );
  });

  it('reads an unpadded header (padding is allowed, not required) and a file at an offset in its buffer', () => {
    const file = rawFile(
      { a: { dtype: 'F32', shape: [1], data_offsets: [0, 4] } },
      f32Tensor([1], new Float32Array([9])).bytes,
    );
    const shifted = new Uint8Array(file.length + 3);
    shifted.set(file, 3);
    const back = readSafetensors(shifted.subarray(3));
    expect(f32Values(back.tensors.get('a') as RawTensor)).toEqual(new Float32Array([9]));
  });
});
