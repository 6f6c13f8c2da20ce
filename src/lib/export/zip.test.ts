import { describe, expect, it } from 'vitest';
import { crc32, unzipFiles, zipFiles } from './zip';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('zip', () => {
  it('computes the standard CRC-32', () => {
    expect(crc32(bytes('123456789'))).toBe(0xcbf43926);
  });

  it('reads back what it writes: deflated and stored members, nested paths, empty files', async () => {
    const random = new Uint8Array(300).map((_, i) => (i * 7919) % 251);
    const files = new Map([
      ['a/config.json', bytes('{"x": 1}\n'.repeat(50))],
      ['b.bin', random],
      ['empty.txt', new Uint8Array(0)],
    ]);
    const zip = await zipFiles(files);
    const back = await unzipFiles(zip);
    expect([...back.keys()]).toEqual([...files.keys()]);
    for (const [k, v] of files) expect(back.get(k)).toEqual(v);
    expect(zip.length).toBeLessThan(450 + 300); // the repetitive member was deflated
    expect(await zipFiles(files)).toEqual(zip); // the same files, the same bytes
  });

  it('refuses what is not a zip, a truncated one and a damaged member', async () => {
    await expect(unzipFiles(bytes('hello'))).rejects.toThrow(/not a zip/);
    const zip = await zipFiles(new Map([['x.txt', bytes('hello hello hello hello')]]));
    await expect(unzipFiles(zip.slice(0, zip.length - 30))).rejects.toThrow(/not a zip|truncated|damaged/);
    const damaged = zip.slice();
    damaged[36] = (damaged[36] as number) ^ 0xff; // in the member's data (header 30, name 5)
    await expect(unzipFiles(damaged)).rejects.toThrow();
  });
});
