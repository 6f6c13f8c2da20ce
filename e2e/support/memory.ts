import type { Page } from 'playwright-core';

interface MemoryBreakdown {
  breakdown: { bytes: number; attribution: { url: string; scope: string }[] }[];
}

/**
 * Bytes the browser attributes to the dedicated worker whose script URL contains `urlPart`,
 * from `performance.measureUserAgentSpecificMemory()` (needs cross-origin isolation; Chromium
 * answers after its next garbage collection, ~15 s in headless). Null where unsupported.
 */
export function workerMemoryBytes(page: Page, urlPart: string): Promise<number | null> {
  return page.evaluate(async (part) => {
    const perf = performance as Performance & {
      measureUserAgentSpecificMemory?: () => Promise<MemoryBreakdown>;
    };
    if (!perf.measureUserAgentSpecificMemory) return null;
    const m = await perf.measureUserAgentSpecificMemory();
    return m.breakdown
      .filter((e) =>
        e.attribution.some((a) => a.scope === 'DedicatedWorkerGlobalScope' && a.url.includes(part)),
      )
      .reduce((sum, e) => sum + e.bytes, 0);
  }, urlPart);
}
