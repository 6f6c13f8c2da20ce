import { existsSync, readFileSync } from 'node:fs';
import type { CpuSample } from '../../src/lib/stats/metrics.ts';

/** Busy and total jiffies of all cores together, from the first line of /proc/stat. */
function readTotals(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  const fields = line.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0); // idle + iowait
  return { busy: total - idle, total };
}

/**
 * Samples how many of the machine's cores are busy (every process: the browser, its workers,
 * the bench itself), every `everyMs`, from /proc/stat (Linux only: `available` says).
 */
export class CpuSampler {
  static readonly available = existsSync('/proc/stat');
  readonly samples: CpuSample[] = [];
  readonly cores: number;
  private timer: ReturnType<typeof setInterval> | undefined;
  private last: { t: number; busy: number; total: number } | null = null;

  constructor(private readonly everyMs = 25) {
    this.cores = CpuSampler.available
      ? readFileSync('/proc/stat', 'utf8')
          .split('\n')
          .filter((l) => /^cpu\d+\s/.test(l)).length
      : 0;
  }

  start(): void {
    if (!CpuSampler.available || this.timer) return;
    this.last = { t: Date.now(), ...readTotals() };
    this.timer = setInterval(() => {
      const now = { t: Date.now(), ...readTotals() };
      const prev = this.last;
      this.last = now;
      if (!prev || now.total <= prev.total) return;
      const busyCores = ((now.busy - prev.busy) / (now.total - prev.total)) * this.cores;
      this.samples.push({ t0: prev.t, t1: now.t, busyCores });
    }, this.everyMs);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
