/**
 * A .zip written and read with the platform's `CompressionStream('deflate-raw')` (browsers, Node
 * ≥ 20): what a run's export downloads and an imported model folder may come as. Deflated or
 * stored members, no zip64 (no member nor archive of 4 GiB), no encryption; the central directory
 * is what the reader trusts (a member written with a data descriptor reads as any other).
 */

/** The files of an archive by path (`/`-separated, no leading slash). */
export type ZipFiles = Map<string, Uint8Array>;

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 (the zip format's, IEEE 802.3) of `bytes`. */
export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++)
    c = (CRC_TABLE[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

async function through(
  bytes: Uint8Array,
  stream: CompressionStream | DecompressionStream,
): Promise<Uint8Array> {
  const out = new Response(new Blob([bytes as BlobPart]).stream().pipeThrough(stream));
  return new Uint8Array(await out.arrayBuffer());
}

const LIMIT = 0xffffffff;

/**
 * The archive of `files`, in their order: each member deflated unless that does not shrink it
 * (then stored). Dates are 1980-01-01, so the same files give the same bytes.
 */
export async function zipFiles(files: ZipFiles): Promise<Uint8Array> {
  const enc = new TextEncoder();
  const parts: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let offset = 0;
  for (const [path, data] of files) {
    const name = enc.encode(path);
    const deflated = await through(data, new CompressionStream('deflate-raw'));
    const [method, body] = deflated.length < data.length ? [8, deflated] : [0, data];
    if (data.length >= LIMIT || offset >= LIMIT) throw new Error(`${path}: the archive would need zip64`);
    const crc = crc32(data);
    const local = new Uint8Array(30 + name.length);
    const l = new DataView(local.buffer);
    l.setUint32(0, 0x04034b50, true);
    l.setUint16(4, 20, true); // version needed: 2.0 (deflate)
    l.setUint16(6, 0x0800, true); // UTF-8 names
    l.setUint16(8, method, true);
    l.setUint16(10, 0, true); // 00:00
    l.setUint16(12, 0x21, true); // 1980-01-01
    l.setUint32(14, crc, true);
    l.setUint32(18, body.length, true);
    l.setUint32(22, data.length, true);
    l.setUint16(26, name.length, true);
    local.set(name, 30);
    const entry = new Uint8Array(46 + name.length);
    const c = new DataView(entry.buffer);
    c.setUint32(0, 0x02014b50, true);
    c.setUint16(4, 20, true);
    c.setUint16(6, 20, true);
    c.setUint16(8, 0x0800, true);
    c.setUint16(10, method, true);
    c.setUint16(14, 0x21, true);
    c.setUint32(16, crc, true);
    c.setUint32(20, body.length, true);
    c.setUint32(24, data.length, true);
    c.setUint16(28, name.length, true);
    c.setUint32(42, offset, true);
    entry.set(name, 46);
    parts.push(local, body);
    central.push(entry);
    offset += local.length + body.length;
  }
  const size = central.reduce((n, e) => n + e.length, 0);
  const end = new Uint8Array(22);
  const e = new DataView(end.buffer);
  e.setUint32(0, 0x06054b50, true);
  e.setUint16(8, files.size, true);
  e.setUint16(10, files.size, true);
  e.setUint32(12, size, true);
  e.setUint32(16, offset, true);
  const out = new Uint8Array(offset + size + 22);
  let at = 0;
  for (const p of [...parts, ...central, end]) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * The files of an archive (folders skipped), refusing, with the reason, what is not a zip this
 * reader can read: no end record, a member outside the file, an unknown method, a bad CRC.
 */
export async function unzipFiles(zip: Uint8Array): Promise<ZipFiles> {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  let end = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--)
    if (view.getUint32(i, true) === 0x06054b50) {
      end = i;
      break;
    }
  if (end < 0) throw new Error('not a zip archive (no end of central directory)');
  const count = view.getUint16(end + 10, true);
  let at = view.getUint32(end + 16, true);
  const dec = new TextDecoder();
  const out: ZipFiles = new Map();
  const inside = (from: number, n: number) => from >= 0 && from + n <= zip.length;
  for (let k = 0; k < count; k++) {
    if (!inside(at, 46) || view.getUint32(at, true) !== 0x02014b50)
      throw new Error('the zip archive is truncated or damaged (central directory)');
    const method = view.getUint16(at + 10, true);
    const crc = view.getUint32(at + 16, true);
    const packed = view.getUint32(at + 20, true);
    const size = view.getUint32(at + 24, true);
    const [nameLen, extraLen, commentLen] = [28, 30, 32].map((o) => view.getUint16(at + o, true)) as [
      number,
      number,
      number,
    ];
    const local = view.getUint32(at + 42, true);
    const path = dec.decode(zip.subarray(at + 46, at + 46 + nameLen));
    at += 46 + nameLen + extraLen + commentLen;
    if (path.endsWith('/')) continue;
    if (!inside(local, 30) || view.getUint32(local, true) !== 0x04034b50)
      throw new Error(`the zip archive is truncated or damaged (${path})`);
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    if (!inside(start, packed)) throw new Error(`the zip archive is truncated: ${path} runs past its end`);
    const body = zip.subarray(start, start + packed);
    let data: Uint8Array;
    if (method === 0) data = body;
    else if (method === 8) data = await through(body, new DecompressionStream('deflate-raw'));
    else throw new Error(`${path} is compressed with method ${method}; only deflate and stored are read`);
    if (data.length !== size || crc32(data) !== crc)
      throw new Error(`${path} in the zip archive is damaged (size or CRC does not match)`);
    out.set(path, data);
  }
  return out;
}
