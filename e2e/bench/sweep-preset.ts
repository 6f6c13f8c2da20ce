import type { Browser } from 'playwright-core';
import { COMPARISON_PRESETS } from '../../src/lib/config/presets.ts';
import { summariseSweep, type SweepSummary } from '../../src/lib/run/sweep-summary.ts';
import { labHandle, untilTrainerSettled } from '../support/lab.ts';

/** What the staleness preset came to in the page: its legs, and the ordering they show. */
export interface PresetSweep {
  preset: string;
  seconds: number;
  legs: {
    eta: number;
    loss: string;
    /** The leg's seed (the preset runs each cell with several; 1 where its plan set none). */
    seed: number;
    successTrain: number | null;
    successHeldOut: number | null;
    meanStaleness: number;
    seconds: number;
    clipped: number;
    lagKl: number | null;
    masked: number | null;
  }[];
  /** Each cell (η, loss) over its seeds, mean ± sd, as the sweep bench reports it. */
  cells: SweepSummary['cells'];
  /** decoupled − PPO at the largest η and at η = 0 (cell means), as the sweep bench reports it. */
  separation: SweepSummary['separation'];
  /** Standard PPO's mean fell from η = 0 to the largest η, and decoupled PPO's ended above it there. */
  ordering: boolean;
}

const r3 = (v: number) => Math.round(v * 1000) / 1000;
const finite = (v: number) => (Number.isFinite(v) ? r3(v) : null);

/**
 * Runs the comparison preset `id` as a user would: picks it, presses Train, waits for its last
 * leg (`timeoutMs`), and reads the legs the chart drew.
 */
export async function runPresetSweep(
  browser: Browser,
  baseUrl: string,
  id: string,
  timeoutMs: number,
  log: (line: string) => void,
  backend?: string,
): Promise<PresetSweep> {
  const preset = COMPARISON_PRESETS.find((p) => p.id === id);
  if (!preset)
    throw new Error(`no comparison preset ${id}: ${COMPARISON_PRESETS.map((p) => p.id).join(', ')}`);
  const page = await browser.newPage();
  await page.goto(`${baseUrl}?debug&wcTimeout=1${backend ? `&backend=${backend}` : ''}`);
  await untilTrainerSettled(page, 180_000);
  await page.getByTestId('preset').selectOption(id);
  const t0 = Date.now();
  await page.getByTestId('train').click();
  const lab = await labHandle(page);
  let done = -1;
  while (Date.now() - t0 < timeoutMs) {
    const s = await lab.evaluate((l) => ({
      comparing: l.run.comparing,
      legs: l.run.comparison?.legs.length ?? 0,
      stopped: l.run.comparison?.stopped ?? false,
      error: l.run.error,
    }));
    if (s.error) throw new Error(`the preset's leg failed: ${s.error}`);
    if (s.legs !== done)
      log(`preset ${id}: ${(done = s.legs)} legs done after ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    if (!s.comparing && (s.legs > 0 || s.stopped) && Date.now() - t0 > 5_000) break;
    await page.waitForTimeout(2_000);
  }
  const seconds = (Date.now() - t0) / 1000;
  if (await lab.evaluate((l) => l.run.comparing))
    throw new Error(
      `the preset ${id} was still running after ${(timeoutMs / 60_000).toFixed(0)} min (--minutes)`,
    );
  const raw = await lab.evaluate((l) => l.run.comparison?.legs ?? []);
  await page.close();
  const legs = raw.map((g) => ({
    eta: g.eta,
    loss: g.loss,
    seed: g.seed ?? 1,
    successTrain: g.success?.train ?? null,
    successHeldOut: g.success?.heldOut ?? null,
    meanStaleness: r3(g.meanStaleness),
    seconds: r3(g.seconds),
    clipped: r3(g.lag.clipped),
    lagKl: finite(g.lag.kl),
    masked: finite(g.lag.masked),
  }));
  const scored = legs.flatMap((g) =>
    g.successTrain === null ? [] : [{ ...g, successTrain: g.successTrain }],
  );
  const { cells, separation } = summariseSweep(scored);
  const at = (eta: number, loss: string) => cells.find((c) => c.eta === eta && c.loss === loss)?.train.mean;
  const largest = separation.largest?.eta ?? NaN;
  const [ppo0, ppoMax, decMax] = [at(0, 'ppo'), at(largest, 'ppo'), at(largest, 'decoupled')];
  const ordering = ppo0 != null && ppoMax != null && decMax != null && ppoMax < ppo0 && decMax > ppoMax;
  return { preset: id, seconds: r3(seconds), legs, cells, separation, ordering };
}
