import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { expect, test } from '@playwright/test';

test('the preview server makes the page cross-origin isolated through its headers', async ({ page }) => {
  const response = await page.goto('./');
  expect(response?.headers()['cross-origin-opener-policy']).toBe('same-origin');
  expect(response?.headers()['cross-origin-embedder-policy']).toBe('require-corp');
  expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
  await expect(page.getByTestId('isolated')).toHaveText('yes (headers)');
});

const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
};

/** A plain static server for dist/ that sends no COOP/COEP headers, like a static host. */
function staticServer(root: string): Promise<Server> {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(
      /^(\.\.[/\\])+/,
      '',
    );
    let file = join(root, path);
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
    if (!existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

test('a static deployment without headers becomes isolated through the service worker', async ({ page }) => {
  const server = await staticServer(join(process.cwd(), 'dist'));
  try {
    const { port } = server.address() as AddressInfo;
    const response = await page.goto(`http://127.0.0.1:${port}/`);
    expect(response?.headers()['cross-origin-embedder-policy']).toBeUndefined();
    // coi-serviceworker registers, then reloads the page once under its control.
    await expect(page.getByTestId('isolated')).toHaveText('yes (service worker)', { timeout: 30_000 });
    expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
  } finally {
    server.close();
  }
});
