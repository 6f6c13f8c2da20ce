import type { Browser } from 'playwright-core';
import type { RunOverrides } from '../../src/lib/config/run-config.ts';

/** What every bench scenario gets from the harness. */
export interface BenchContext {
  /** URL of the built app, served by `vite preview` with the isolation headers. */
  baseUrl: string;
  /** Absolute path of the built `dist/`. */
  distDir: string;
  /** Launches headless Chromium, with `--enable-unsafe-webgpu` unless `webgpu` is false. */
  launch(opts?: { webgpu?: boolean }): Promise<Browser>;
  /** The run config fields every run of the bench sets (`--set group.field=value`, checked before anything starts). */
  config: RunOverrides;
  /** Command-line options after `--`, e.g. `--programs FILE` → { programs: ['FILE'] }. */
  options: Record<string, string[]>;
  /** Progress line on stderr (stdout's last line is the JSON object). */
  log(line: string): void;
  /** What one scenario leaves for the next ones of the same bench run (e.g. `learn`'s trained policy). */
  shared: Map<string, unknown>;
}

/** Figures a scenario measured, keyed `scenario.key` (e.g. `backend.stepMs`). */
export type BenchResult = Record<string, unknown>;

/** One bench scenario: one file in `e2e/bench/scenarios/` with this as its default export. */
export interface Scenario {
  name: string;
  description: string;
  run(ctx: BenchContext): Promise<BenchResult>;
}

/** Median of a non-empty list. */
export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? NaN) + (s[mid] ?? NaN)) / 2;
}
