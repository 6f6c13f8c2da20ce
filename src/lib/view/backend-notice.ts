/**
 * The header's line on the backends the trainer passed over (pure): which it runs on, which it
 * passed over, and whether any of them was lost (could not start or train) rather than measured
 * slower. The reasons stay behind the line, one per backend.
 */
import type { BackendReport } from '../policy/backend';
import type { BackendChoice } from '../policy/backend-choice';

/** What the line says, and whether it warns. */
export interface FallbackLine {
  /** `Trainer on wasm, the fastest measured · passed over: webgpu`. */
  text: string;
  /** A backend could not start or train (a warning); otherwise one measured slower (a note). */
  lost: boolean;
}

/** The line for a trainer's backend report, or null when nothing was passed over. */
export function fallbackLine(
  info: Pick<BackendReport, 'backend' | 'fallbacks'> & { choice?: BackendChoice | null },
): FallbackLine | null {
  if (!info.fallbacks.length) return null;
  const measured = info.choice?.timings.map((t) => t.backend) ?? [];
  const lost = info.fallbacks.some((f) => !measured.includes(f.backend));
  const why = measured.length > 1 ? 'the fastest measured' : 'not a faster backend';
  const names = info.fallbacks.map((f) => f.backend).join(', ');
  return { text: `Trainer on ${info.backend}, ${why} · passed over: ${names}`, lost };
}
