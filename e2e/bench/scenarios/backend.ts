import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { BACKEND_ORDER } from '../../../src/lib/policy/backend.ts';
import { median, type Scenario } from '../harness.ts';
import { openTrainer, trainAndTime } from '../page.ts';

/** Steps timed per backend, after one warm-up step (which compiles shaders / kernels). */
const TIMED_STEPS = 5;

/**
 * Gzipped kB of `entries` and every chunk they reference: only static imports (`from "./x.js"`,
 * `import "./x.js"`) when `lazy` is false, dynamic `import("./x.js")` too when it is true.
 */
function gzKb(distDir: string, entries: string[], lazy: boolean): number {
  const seen = new Set<string>();
  const queue = [...entries];
  let bytes = 0;
  const refs = lazy
    ? /["'`]\.\/([\w.-]+\.(?:js|css))["'`]/g
    : /(?:from|import)\s*["'`]\.\/([\w.-]+\.js)["'`]/g;
  while (queue.length) {
    const rel = queue.pop() ?? '';
    if (seen.has(rel)) continue;
    seen.add(rel);
    const file = join(distDir, rel);
    if (!existsSync(file)) continue;
    const text = readFileSync(file);
    bytes += gzipSync(text).length;
    if (rel.endsWith('.js')) {
      for (const m of text.toString('utf8').matchAll(refs)) queue.push(`assets/${m[1]}`);
    }
  }
  return Math.round((bytes / 1024) * 10) / 10;
}

function bundleSizes(distDir: string): { main: number; mainLazy: number; worker: number } {
  const html = readFileSync(join(distDir, 'index.html'), 'utf8');
  const mainEntries = [...html.matchAll(/(?:src|href)="\.\/(assets\/[^"]+\.(?:js|css))"/g)].map(
    (m) => m[1] ?? '',
  );
  const mainJs = mainEntries.find((e) => e.endsWith('.js')) ?? '';
  const mainText = readFileSync(join(distDir, mainJs), 'utf8');
  const worker = /(trainer\.worker-[\w-]+\.js)/.exec(mainText)?.[1];
  if (!worker) throw new Error('cannot find the trainer worker chunk in the main bundle');
  const main = gzKb(distDir, mainEntries, false);
  return {
    main,
    mainLazy: Math.round((gzKb(distDir, mainEntries, true) - main) * 10) / 10,
    worker: gzKb(distDir, [`assets/${worker}`], true),
  };
}

const round1 = (v: number) => Math.round(v * 10) / 10;

const scenario: Scenario = {
  name: 'backend',
  description:
    "which tfjs backend the trainer uses, the page's own measured choice, and ms per training step on every backend that loads",
  async run({ baseUrl, distDir, launch, log }) {
    const browser = await launch();
    const stepMs: Record<string, number> = {};
    const unavailable: Record<string, string> = {};
    try {
      // The default page: best backend available, first step timed from navigation start.
      const page = await openTrainer(browser, baseUrl);
      const info = await page.lab.evaluate((l) => l.trainer.info);
      if (!info)
        throw new Error(`trainer failed to start: ${await page.lab.evaluate((l) => l.trainer.error)}`);
      await trainAndTime(page, 1);
      const firstStepMs = await page.lab.evaluate((l) => l.trainer.firstStepAt);
      log(
        `default page runs on ${info.backend} (${info.adapter ?? 'no adapter'}), first step after ${firstStepMs} ms`,
      );
      // What the page measured at start (warm-up + timed steps per backend) and chose by.
      const measured = Object.fromEntries(
        (info.choice?.timings ?? []).map((t) => [
          t.backend,
          t.msPerStep === null ? null : round1(t.msPerStep),
        ]),
      );
      log(`page's measured choice: ${info.choice?.label ?? 'none'} (${round1(info.choice?.ms ?? 0)} ms)`);
      stepMs[info.backend] = round1(median(await trainAndTime(page, TIMED_STEPS)));
      await page.page.close();

      for (const backend of BACKEND_ORDER.filter((b) => b !== info.backend)) {
        const p = await openTrainer(browser, baseUrl, `backend=${backend}`);
        const error = await p.lab.evaluate((l) => l.trainer.error);
        if (error) {
          unavailable[backend] = error;
          log(`${backend}: unavailable (${error})`);
        } else {
          await trainAndTime(p, 1);
          stepMs[backend] = round1(median(await trainAndTime(p, TIMED_STEPS)));
          log(`${backend}: ${stepMs[backend]?.toFixed(1)} ms/step`);
        }
        await p.page.close();
      }
      const sizes = bundleSizes(distDir);
      return {
        'backend.used': info.backend,
        'backend.choice': info.choice?.backend ?? null,
        'backend.choiceStepMs': measured,
        'backend.choiceMs': info.choice ? round1(info.choice.ms) : null,
        'backend.adapter': info.adapter ?? 'none',
        'backend.stepMs': stepMs,
        'backend.firstStepMs': firstStepMs === null ? null : round1(firstStepMs),
        'backend.unavailable': unavailable,
        'bundle.mainKbGz': sizes.main,
        'bundle.mainLazyKbGz': sizes.mainLazy,
        'bundle.workerKbGz': sizes.worker,
      };
    } finally {
      await browser.close();
    }
  },
};

export default scenario;
