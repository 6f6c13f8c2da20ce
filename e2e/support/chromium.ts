import { existsSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

/** Places where a system Chromium or Chrome is commonly installed, in order of preference. */
const CANDIDATES = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/snap/bin/chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
];

/** Flags every launch needs on a closed-network CI machine (see README). */
export const BASE_ARGS = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Adds a real WebGPU adapter (SwiftShader, in software) even on a machine with no GPU. */
export const WEBGPU_ARGS = ['--enable-unsafe-webgpu'];

/** The Chromium to launch: `CHROMIUM_PATH` if set, else the first system install found, else null. */
export function findChromium(): string | null {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`CHROMIUM_PATH is set to ${fromEnv}, but no file is there.`);
    return fromEnv;
  }
  return CANDIDATES.find((p) => existsSync(p)) ?? null;
}

function isDebianLike(): boolean {
  try {
    return /^(ID|ID_LIKE)=.*(debian|ubuntu)/m.test(readFileSync('/etc/os-release', 'utf8'));
  } catch {
    return false;
  }
}

/**
 * Returns a Chromium path, installing Debian's `chromium` package first when none is found on a
 * Debian/Ubuntu machine run as root; otherwise throws with what to install or set.
 */
export function ensureChromium(log: (line: string) => void = console.log): string {
  const found = findChromium();
  if (found) return found;
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isDebianLike() && root) {
    log('No Chromium found: installing Debian/Ubuntu package "chromium" (apt-get)…');
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
    execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    const installed = findChromium();
    if (installed) return installed;
  }
  throw new Error(
    'No Chromium or Chrome was found for the end-to-end tests. Install one ' +
      '(Debian/Ubuntu: `sudo apt-get install chromium`; macOS: Google Chrome) or set CHROMIUM_PATH ' +
      'to the browser executable. Playwright’s own browser download is not used.',
  );
}
