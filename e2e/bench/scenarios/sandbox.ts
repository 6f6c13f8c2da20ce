import { readFileSync } from 'node:fs';
import type { JsonValue } from '../../../src/lib/sandbox/types.ts';
import { labHandle, untilLabExposed } from '../../support/lab.ts';
import { workerMemoryBytes } from '../../support/memory.ts';
import type { Scenario } from '../harness.ts';

/** One line of a `--programs FILE`: a program and its inputs. */
interface ProgramLine {
  code: string;
  inputs: JsonValue[];
}

/** Reads a JSON-lines file of programs; throws naming the first bad line. */
export function readPrograms(path: string): ProgramLine[] {
  const lines = readFileSync(path, 'utf8').split(/\r?\n/);
  const out: ProgramLine[] = [];
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      throw new Error(`${path}:${i + 1}: not valid JSON`);
    }
    const o = v as Partial<ProgramLine>;
    if (typeof o !== 'object' || o === null || typeof o.code !== 'string' || !Array.isArray(o.inputs)) {
      throw new Error(`${path}:${i + 1}: expected {"code": string, "inputs": array}`);
    }
    out.push({ code: o.code, inputs: o.inputs });
  });
  return out;
}

const round = (v: number, d = 2) => Math.round(v * 10 ** d) / 10 ** d;
const p99 = (xs: number[]) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(0.99 * xs.length))] ?? NaN;

const scenario: Scenario = {
  name: 'sandbox',
  description:
    'QuickJS runs per second in one worker (fresh context per run), latency, timeout overshoot, heap growth',
  async run({ baseUrl, launch, options, log }) {
    const programs = options.programs?.flatMap(readPrograms);
    const browser = await launch({ webgpu: false });
    try {
      const page = await browser.newPage();
      await page.goto(`${baseUrl}?debug&wcTimeout=1`);
      await untilLabExposed(page);
      const api = await (await labHandle(page)).evaluateHandle((l) => l.sandbox.bridge.api);
      await api.evaluate((a) => a.soak(500)); // warm-up: wasm compile, JIT
      const before = await workerMemoryBytes(page, 'sandbox.worker');
      const soak = await api.evaluate((a) => a.soak(10_000));
      const after = await workerMemoryBytes(page, 'sandbox.worker');
      const jsGrowthMb = before === null || after === null ? null : (after - before) / 2 ** 20;
      log(`soak: ${JSON.stringify(soak)}`);
      if (soak.wrong) throw new Error(`${soak.wrong} of ${soak.runs} soak runs returned wrong outputs`);
      const overshoot = await api.evaluate((a) => a.timeoutOvershoot(100, 50));
      const result: Record<string, unknown> = {
        'sandbox.kind': 'quickjs',
        'sandbox.runsPerSec': Math.round(soak.runsPerSec),
        'sandbox.p50Ms': round(soak.p50Ms, 3),
        'sandbox.p99Ms': round(soak.p99Ms, 3),
        'sandbox.timeoutOvershootMs': round(p99(overshoot)),
        // The worker's JS memory (as the browser attributes it) plus the QuickJS wasm heap.
        'sandbox.heapGrowthMb': round((jsGrowthMb ?? 0) + soak.wasmGrowthMb),
      };
      if (programs) {
        // Sent as JSON text: Playwright's argument types cannot unfold the recursive JSON value type.
        const results = await api.evaluate(
          (a, text) => a.runBatch(JSON.parse(text)),
          JSON.stringify(programs),
        );
        result['sandbox.programs'] = results.map((r) => ({
          kind: r.ok ? 'ok' : (r.error?.kind ?? 'internal'),
          ms: round(r.ms, 3),
          ...(r.ok ? { outputs: r.outputs } : {}),
        }));
      }
      return result;
    } finally {
      await browser.close();
    }
  },
};

export default scenario;
