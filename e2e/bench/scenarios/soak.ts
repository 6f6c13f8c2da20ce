import type { CDPSession, Page } from 'playwright-core';
import type { Scenario } from '../harness.ts';
import { labHandle, untilTrainerSettled } from '../../support/lab.ts';

/** One reading of the page while it trains. */
interface Sample {
  /** Minutes since the run started. */
  min: number;
  storageMB: number;
  /** Records per object store of the app's database. */
  records: Record<string, number>;
  jsHeapMB: number;
  domNodes: number;
  /** The page and its workers, as `measureUserAgentSpecificMemory` counts them (null: not exposed). */
  rendererMB: number | null;
  /** Delay from a click's input event to its handler, and to the next frame, ms. */
  clickMs: number;
  clickToFrameMs: number;
  version: number;
}

const MB = 1e6;
const round = (x: number, d = 2) => Number(x.toFixed(d));

/** Least-squares slope of `y` against `x` (per minute when `x` is in minutes). */
export function slope(points: readonly [number, number][]): number {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return sxx > 0 ? sxy / sxx : NaN;
}

/** The 95th percentile of a non-empty list. */
function p95(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(0.95 * s.length) - 1)] ?? NaN;
}

/** Record counts of every object store of the app's database, read in the page. */
function storeCounts(page: Page): Promise<Record<string, number>> {
  return page.evaluate(
    () =>
      new Promise<Record<string, number>>((resolve, reject) => {
        const open = indexedDB.open('sandbox-rl-lab');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const db = open.result;
          const names = [...db.objectStoreNames];
          const tx = db.transaction(names);
          const out: Record<string, number> = {};
          for (const name of names) {
            const req = tx.objectStore(name).count();
            req.onsuccess = () => (out[name] = req.result);
          }
          tx.oncomplete = () => {
            db.close();
            resolve(out);
          };
          tx.onerror = () => reject(tx.error);
        };
      }),
  );
}

/** Bytes of the page and its workers, or null where the platform does not say (within 20 s). */
function rendererBytes(page: Page): Promise<number | null> {
  return page.evaluate(async () => {
    const perf = performance as Performance & {
      measureUserAgentSpecificMemory?: () => Promise<{ bytes: number }>;
    };
    if (!perf.measureUserAgentSpecificMemory || !crossOriginIsolated) return null;
    const timeout = new Promise<null>((r) => setTimeout(() => r(null), 20_000));
    const m = await Promise.race([perf.measureUserAgentSpecificMemory(), timeout]);
    return m?.bytes ?? null;
  });
}

/**
 * Clicks a control (the timeline's "fit" button, else the page's heading) as a user would, and
 * returns how long the page's main thread took to run its handler after the input event, and to
 * draw the next frame after it.
 */
async function clickDelay(page: Page): Promise<{ handler: number; frame: number }> {
  const target = (await page.locator('[data-testid="timeline-fit"]').isVisible())
    ? '[data-testid="timeline-fit"]'
    : 'h1';
  const timing = page.evaluate(
    (sel) =>
      new Promise<{ handler: number; frame: number }>((resolve) => {
        const el = document.querySelector(sel);
        el?.addEventListener(
          'click',
          (e) => {
            const handler = performance.now() - e.timeStamp;
            requestAnimationFrame(() => resolve({ handler, frame: performance.now() - e.timeStamp }));
          },
          { once: true, capture: true },
        );
      }),
    target,
  );
  await page.click(target);
  return timing;
}

async function sample(page: Page, cdp: CDPSession, startedAt: number): Promise<Omit<Sample, 'version'>> {
  const { metrics } = await cdp.send('Performance.getMetrics');
  const metric = (name: string) => metrics.find((m) => m.name === name)?.value ?? NaN;
  const estimate = await page.evaluate(() => navigator.storage.estimate());
  const records = await storeCounts(page);
  const click = await clickDelay(page);
  const renderer = await rendererBytes(page);
  return {
    min: (Date.now() - startedAt) / 60_000,
    storageMB: (estimate.usage ?? 0) / MB,
    records,
    jsHeapMB: metric('JSHeapUsedSize') / MB,
    domNodes: metric('Nodes'),
    rendererMB: renderer === null ? null : renderer / MB,
    clickMs: click.handler,
    clickToFrameMs: click.frame,
  };
}

/** Figures of the samples taken in the run's last half: the last value and the slope per minute. */
function lastHalf(
  samples: readonly Sample[],
  pick: (s: Sample) => number | null,
): { last: number; slope: number } {
  const end = samples.at(-1)?.min ?? 0;
  const points = samples
    .filter((s) => s.min >= end / 2)
    .flatMap((s): [number, number][] => {
      const y = pick(s);
      return y === null ? [] : [[s.min, y]];
    });
  return { last: round(points.at(-1)?.[1] ?? NaN), slope: round(slope(points), 3) };
}

/**
 * What a user meets after the long run: a reload while it trains, the run list back with the run,
 * Resume, and the trajectories that waited unconsumed before the reload still stored and trained.
 */
async function reloadAndResume(page: Page, log: (line: string) => void): Promise<Record<string, unknown>> {
  const lab = await labHandle(page);
  const runId = await lab.evaluate((l) => l.run.runId);
  if (!runId) throw new Error('no run to reload');
  const waiting = await lab.evaluate((l, id) => l.run.storedSeqs(id, 'unconsumed'), runId);
  const reloadedAt = Date.now();
  await page.reload();
  await untilTrainerSettled(page, 180_000);
  const again = await labHandle(page);
  const listed = () => again.evaluate((l, id) => l.run.runs.find((r) => r.id === id) ?? null, runId);
  let entry = await listed();
  for (const deadline = Date.now() + 60_000; !entry && Date.now() < deadline; entry = await listed()) {
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!entry) throw new Error(`the run list lacks ${runId} 60 s after the reload`);
  const listMs = Date.now() - reloadedAt;
  const stored = new Set(await again.evaluate((l, id) => l.run.storedSeqs(id, 'all'), runId));
  const missing = waiting.filter((s) => !stored.has(s)).length;
  const resumedAt = Date.now();
  // Resume settles when the run ends: not awaited.
  await again.evaluate((l, id) => void l.run.resume(id), runId);
  const version = () => again.evaluate((l) => [l.run.dashboard?.version ?? -1, l.run.error] as const);
  let [v, error] = await version();
  for (const deadline = Date.now() + 120_000; v <= entry.latestVersion && !error && Date.now() < deadline;) {
    await new Promise((r) => setTimeout(r, 250));
    [v, error] = await version();
  }
  if (error) throw new Error(`the resumed run failed: ${error}`);
  const resumeMs = Date.now() - resumedAt;
  // The waiting ones are trained (or dropped as too stale, which marks them consumed too).
  const left = async () => {
    const now = new Set(await again.evaluate((l, id) => l.run.storedSeqs(id, 'unconsumed'), runId));
    return waiting.filter((s) => now.has(s)).length;
  };
  let untrained = await left();
  for (
    const deadline = Date.now() + 120_000;
    untrained > 0 && Date.now() < deadline;
    untrained = await left()
  ) {
    await new Promise((r) => setTimeout(r, 500));
  }
  const click = await clickDelay(page);
  await again.evaluate((l) => l.run.stop());
  const result = {
    'soak.reload.listMs': listMs,
    'soak.reload.waitingBefore': waiting.length,
    'soak.reload.missing': missing,
    'soak.reload.untrainedAfterResume': untrained,
    'soak.reload.resumeMs': resumeMs,
    'soak.reload.versionBefore': entry.latestVersion,
    'soak.reload.versionAfter': v,
    'soak.reload.clickMs': round(click.handler, 1),
  };
  log(`reload: ${JSON.stringify(result)}`);
  return result;
}

const scenario: Scenario = {
  name: 'soak',
  description:
    'a default run left training for --minutes N (30): every 30 s (--every) the storage estimate, records per store, JS heap, DOM nodes, renderer memory and the delay of a click while training; the last of each and its slope per minute over the last half; then a reload while it trains and Resume (`--reload no` skips): the run list back, nothing stored lost, the waiting trajectories trained',
  async run({ baseUrl, launch, options, log }) {
    const minutes = Number(options.minutes?.[0] ?? 30);
    const every = Number(options.every?.[0] ?? 30) * 1000;
    const backend = options.backend?.[0];
    const browser = await launch();
    try {
      const page = await browser.newPage();
      await page.goto(`${baseUrl}?debug&wcTimeout=1${backend ? `&backend=${backend}` : ''}`);
      await untilTrainerSettled(page, 180_000);
      const lab = await labHandle(page);
      const error = await lab.evaluate((l) => l.trainer.error);
      if (error) throw new Error(`trainer failed to start: ${error}`);
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Performance.enable');
      // A default run, as "Start a new run" starts it.
      await lab.evaluate((l) => void l.run.start());
      const startedAt = Date.now();
      const samples: Sample[] = [];
      for (let next = startedAt + every; next <= startedAt + minutes * 60_000 + 1000; next += every) {
        await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
        const [version, failed] = await lab.evaluate(
          (l) => [l.run.dashboard?.version ?? -1, l.run.error] as const,
        );
        if (failed) throw new Error(`the run failed: ${failed}`);
        const s = { ...(await sample(page, cdp, startedAt)), version };
        samples.push(s);
        log(
          `${s.min.toFixed(1)} min: version ${version}, storage ${s.storageMB.toFixed(1)} MB, heap ${s.jsHeapMB.toFixed(1)} MB, ` +
            `${s.domNodes} nodes, renderer ${s.rendererMB?.toFixed(0) ?? '–'} MB, click ${s.clickMs.toFixed(0)} ms, ${JSON.stringify(s.records)}`,
        );
      }
      // The samples are the run's own; the reload's figures come apart, after them.
      const skipReload = options.reload?.[0] === 'no';
      if (skipReload) await lab.evaluate((l) => l.run.stop());
      const reload = skipReload ? {} : await reloadAndResume(page, log);
      const storage = lastHalf(samples, (s) => s.storageMB);
      const heap = lastHalf(samples, (s) => s.jsHeapMB);
      const nodes = lastHalf(samples, (s) => s.domNodes);
      const renderer = lastHalf(samples, (s) => s.rendererMB);
      const stores = Object.keys(samples.at(-1)?.records ?? {});
      const result: Record<string, unknown> = {
        'soak.minutes': round(samples.at(-1)?.min ?? 0, 1),
        'soak.versions': samples.at(-1)?.version ?? -1,
        'soak.storageMB': storage.last,
        'soak.storageSlopeMBPerMin': storage.slope,
        'soak.jsHeapMB': heap.last,
        'soak.jsHeapSlopeMBPerMin': heap.slope,
        'soak.domNodes': nodes.last,
        'soak.domNodesSlopePerMin': nodes.slope,
        'soak.rendererMB': Number.isNaN(renderer.last) ? null : renderer.last,
        'soak.rendererSlopeMBPerMin': Number.isNaN(renderer.slope) ? null : renderer.slope,
        'soak.clickMsP95': round(p95(samples.map((s) => s.clickMs)), 1),
        'soak.clickToFrameMsP95': round(p95(samples.map((s) => s.clickToFrameMs)), 1),
      };
      for (const name of stores) {
        const r = lastHalf(samples, (s) => s.records[name] ?? 0);
        result[`soak.records.${name}`] = r.last;
        result[`soak.records.${name}SlopePerMin`] = r.slope;
      }
      result['soak.samples'] = samples.map((s) => ({
        min: round(s.min, 1),
        storageMB: round(s.storageMB, 1),
        jsHeapMB: round(s.jsHeapMB, 1),
        domNodes: s.domNodes,
        version: s.version,
      }));
      Object.assign(result, reload);
      log(JSON.stringify(result));
      return result;
    } finally {
      await browser.close();
    }
  },
};

export default scenario;
