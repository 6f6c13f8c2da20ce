/**
 * The safetensors format (Hugging Face), written and read from its rules: an 8-byte little-endian
 * header length N, an N-byte UTF-8 JSON header `{ name: { dtype, shape, data_offsets: [begin, end] },
 * __metadata__?: { string: string } }` (padded with spaces so the data starts 8-byte aligned), then
 * the tensors' raw little-endian, C-order bytes, every byte belonging to exactly one tensor.
 */

/** The format's element types and their sizes in bytes. */
export const DTYPE_BYTES = {
  BOOL: 1,
  U8: 1,
  I8: 1,
  F8_E5M2: 1,
  F8_E4M3: 1,
  I16: 2,
  U16: 2,
  F16: 2,
  BF16: 2,
  I32: 4,
  U32: 4,
  F32: 4,
  F64: 8,
  I64: 8,
  U64: 8,
} as const;

export type SafetensorsDtype = keyof typeof DTYPE_BYTES;

/** One tensor: its type, shape and raw little-endian bytes (C order). */
export interface RawTensor {
  dtype: SafetensorsDtype;
  shape: number[];
  bytes: Uint8Array;
}

/** A safetensors file's contents: tensors by name and its string-only metadata. */
export interface SafetensorsFile {
  tensors: Map<string, RawTensor>;
  metadata: Record<string, string>;
}

/** The reference implementation refuses headers above 100 MB; so do we. */
export const MAX_HEADER_BYTES = 100_000_000;

const isDtype = (v: unknown): v is SafetensorsDtype => typeof v === 'string' && Object.hasOwn(DTYPE_BYTES, v);
const count = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

/** A float32 tensor as safetensors `F32` (little-endian whatever the host's byte order). */
export function f32Tensor(shape: number[], values: Float32Array): RawTensor {
  if (values.length !== count(shape))
    throw new Error(`${values.length} values do not fill shape [${shape.join(', ')}]`);
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < values.length; i++) view.setFloat32(i * 4, values[i] as number, true);
  return { dtype: 'F32', shape, bytes };
}

/** An `F32` tensor's values (read little-endian). */
export function f32Values(t: RawTensor): Float32Array {
  if (t.dtype !== 'F32') throw new Error(`the tensor is ${t.dtype}, not F32`);
  const view = new DataView(t.bytes.buffer, t.bytes.byteOffset, t.bytes.byteLength);
  const out = new Float32Array(t.bytes.byteLength / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

/**
 * The file's bytes. Tensors are laid out by decreasing element size (then in the order given), as
 * the Python library does, so that with the data 8-byte aligned every tensor starts aligned to its
 * element size. The header lists `__metadata__` first, then the tensors in data order.
 */
export function writeSafetensors(
  tensors: ReadonlyMap<string, RawTensor>,
  metadata: Record<string, string> = {},
): Uint8Array {
  for (const [k, v] of Object.entries(metadata))
    if (typeof v !== 'string')
      throw new Error(`metadata ${k} is ${typeof v}: safetensors metadata holds strings only`);
  const order = [...tensors.entries()]
    .map(([name, t], i) => ({ name, t, i }))
    .sort((a, b) => DTYPE_BYTES[b.t.dtype] - DTYPE_BYTES[a.t.dtype] || a.i - b.i);
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) header.__metadata__ = metadata;
  let offset = 0;
  for (const { name, t } of order) {
    if (name === '__metadata__') throw new Error('no tensor may be named __metadata__');
    if (!isDtype(t.dtype)) throw new Error(`tensor ${name}: unknown dtype ${String(t.dtype)}`);
    if (!t.shape.every((d) => Number.isInteger(d) && d >= 0))
      throw new Error(`tensor ${name}: shape [${t.shape.join(', ')}] is not non-negative integers`);
    const size = count(t.shape) * DTYPE_BYTES[t.dtype];
    if (t.bytes.byteLength !== size)
      throw new Error(
        `tensor ${name}: ${t.bytes.byteLength} bytes, its ${t.dtype} shape [${t.shape}] needs ${size}`,
      );
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + size] };
    offset += size;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  // Spaces after the JSON so that 8 + N is a multiple of 8: the data starts aligned.
  const n = Math.ceil(json.length / 8) * 8;
  const out = new Uint8Array(8 + n + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(n), true);
  out.set(json, 8);
  out.fill(0x20, 8 + json.length, 8 + n);
  let at = 8 + n;
  for (const { t } of order) {
    out.set(t.bytes, at);
    at += t.bytes.byteLength;
  }
  return out;
}

/**
 * Reads a safetensors file, checking every rule of the format: the header's length fits the file,
 * it is a UTF-8 JSON object that starts with `{`, metadata holds strings only, every tensor has a
 * known dtype, a shape of non-negative integers and offsets whose span is its size, and the
 * tensors cover the data exactly, without hole or overlap. `name` says which file in the errors.
 * The tensors' bytes are views into `file`.
 */
export function readSafetensors(file: Uint8Array, name = 'the safetensors file'): SafetensorsFile {
  if (file.byteLength < 8)
    throw new Error(`${name} is truncated: ${file.byteLength} bytes, not even the 8-byte header length`);
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const n64 = view.getBigUint64(0, true);
  if (n64 > BigInt(MAX_HEADER_BYTES))
    throw new Error(`${name}: its header length ${n64} exceeds ${MAX_HEADER_BYTES} bytes`);
  const n = Number(n64);
  if (8 + n > file.byteLength)
    throw new Error(
      `${name} is truncated: its header says ${n} bytes, the file has ${file.byteLength - 8} after the length`,
    );
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(file.subarray(8, 8 + n));
  } catch {
    throw new Error(`${name}: its header is not UTF-8`);
  }
  if (!text.startsWith('{')) throw new Error(`${name}: its header does not start with "{"`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`${name}: its header is not JSON (${err instanceof Error ? err.message : String(err)})`, {
      cause: err,
    });
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new Error(`${name}: its header is not a JSON object`);
  const data = file.subarray(8 + n);
  const metadata: Record<string, string> = {};
  const spans: { name: string; begin: number; end: number; dtype: SafetensorsDtype; shape: number[] }[] = [];
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    if (key === '__metadata__') {
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        throw new Error(`${name}: __metadata__ is not an object of strings`);
      for (const [mk, mv] of Object.entries(value as Record<string, unknown>)) {
        if (typeof mv !== 'string')
          throw new Error(
            `${name}: metadata ${mk} is ${JSON.stringify(mv)}; safetensors metadata holds strings only`,
          );
        metadata[mk] = mv;
      }
      continue;
    }
    spans.push(tensorEntry(name, key, value));
  }
  // Every byte of the data belongs to exactly one tensor (the format forbids holes: no polyglots).
  spans.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let at = 0;
  for (const s of spans) {
    if (s.begin !== at)
      throw new Error(
        s.begin > at
          ? `${name}: bytes ${at}–${s.begin} of the data belong to no tensor (before ${s.name})`
          : `${name}: tensor ${s.name} overlaps the tensor before it (it starts at ${s.begin}, before ${at})`,
      );
    at = s.end;
  }
  if (at > data.byteLength)
    throw new Error(
      `${name} is truncated: its tensors need ${at} bytes of data, the file has ${data.byteLength}`,
    );
  if (at < data.byteLength)
    throw new Error(`${name}: ${data.byteLength - at} bytes after the last tensor belong to no tensor`);
  const tensors = new Map<string, RawTensor>();
  for (const s of spans)
    tensors.set(s.name, { dtype: s.dtype, shape: s.shape, bytes: data.subarray(s.begin, s.end) });
  return { tensors, metadata };
}

/** One header entry, checked: dtype known, shape non-negative integers, offsets spanning its size. */
function tensorEntry(
  file: string,
  key: string,
  value: unknown,
): { name: string; begin: number; end: number; dtype: SafetensorsDtype; shape: number[] } {
  const e = value as { dtype?: unknown; shape?: unknown; data_offsets?: unknown } | null;
  if (typeof e !== 'object' || e === null) throw new Error(`${file}: tensor ${key} is not an object`);
  if (!isDtype(e.dtype))
    throw new Error(`${file}: tensor ${key} has unknown dtype ${JSON.stringify(e.dtype)}`);
  const shape = e.shape;
  if (!Array.isArray(shape) || !shape.every((d): d is number => Number.isSafeInteger(d) && d >= 0))
    throw new Error(
      `${file}: tensor ${key} has shape ${JSON.stringify(shape)}, not a list of non-negative integers`,
    );
  const off = e.data_offsets;
  if (
    !Array.isArray(off) ||
    off.length !== 2 ||
    !off.every((o): o is number => Number.isSafeInteger(o) && o >= 0) ||
    (off[1] as number) < (off[0] as number)
  )
    throw new Error(
      `${file}: tensor ${key} has data_offsets ${JSON.stringify(off)}, not [begin, end] with begin ≤ end`,
    );
  const [begin, end] = off as [number, number];
  const size = count(shape) * DTYPE_BYTES[e.dtype];
  if (end - begin !== size)
    throw new Error(
      `${file}: tensor ${key} spans ${end - begin} bytes, its ${e.dtype} shape [${shape.join(', ')}] needs ${size}`,
    );
  return { name: key, begin, end, dtype: e.dtype, shape };
}
