/// <reference types="node" />
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CONTRACT, HOST_ACCESS_CASES } from './corpus';
import { nodeScript, readNodeOutput } from './node-runner';
import { resolveLimits } from './types';

// The WebContainer sandbox cannot boot here, but the script it runs is plain Node.js: run it
// with this machine's node on the cases whose meaning does not depend on host access.
const root = mkdtempSync(join(tmpdir(), 'srl-node-runner-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const RESOURCE_CASES = [
  'infinite loop',
  'memory bomb',
  'a 100 MB string as output',
  'unbounded recursion',
  'dynamic import()',
  'a promise job that queues itself', // Node prints the outputs, then spins in microtasks until killed
];
const cases = CONTRACT.filter((c) => !HOST_ACCESS_CASES.has(c.name) && !RESOURCE_CASES.includes(c.name));

describe('WebContainer node runner, run with real Node.js', () => {
  it.each(cases.map((c, i) => [c.name, c, i] as const))('%s', (_name, c, i) => {
    const dir = join(root, String(i));
    mkdirSync(dir);
    for (const [name, text] of Object.entries(c.request.files ?? {})) writeFileSync(join(dir, name), text);
    const script = join(root, `${i}.cjs`);
    writeFileSync(script, nodeScript(c.request, resolveLimits(c.request.limits), dir));
    const proc = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 10_000 });
    const r = readNodeOutput(`${proc.stdout}${proc.stderr}`, proc.status ?? -1, c.request.inputs.length);
    expect(r.ok ? 'ok' : r.error?.kind).toBe(c.expect);
    if (c.outputs) expect(r.outputs).toEqual(c.outputs);
    if (c.stdout !== undefined) expect(r.stdout).toBe(c.stdout);
  });
});
