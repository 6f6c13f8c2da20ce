import { errorMessage } from '../errors';
import { BACKEND_ORDER, type BackendName } from './backend';

/** How the trainer measures its backends when it starts (DESIGN §2). */
export interface MeasurePlan {
  /** Backends measured, in this order: wasm first (quick and clean), webgpu on what is left. */
  order: readonly BackendName[];
  /** Time for the whole measurement, ms: each backend's cap is what is left, shared by those left (`capFor`). */
  budgetMs: number;
  /** Training steps timed after the warm-up step (which compiles kernels and shaders). */
  timedSteps: number;
  /** After a backend is stopped mid-step, how long to wait for that step to give up, ms. */
  abortGraceMs: number;
}

export const MEASURE_PLAN: MeasurePlan = {
  order: ['wasm', 'webgpu'],
  budgetMs: 3000,
  timedSteps: 3,
  abortGraceMs: 2000,
};

/** One backend's measurement: a warm-up step, then timed training steps of the real model. */
export interface BackendTiming {
  backend: BackendName;
  /** Median ms of the timed steps; null when none finished (cut, or failed). */
  msPerStep: number | null;
  /** ms of the warm-up step, compilation included; null when it did not finish. */
  warmupMs: number | null;
  /** Timed steps that finished. */
  steps: number;
  /** The cap this backend's warm-up had to finish within, ms. */
  capMs: number;
  /**
   * ms the warm-up had run when the cap stopped it (the backend's work was aborted: it is not
   * used), or null when it finished.
   */
  cutAfterMs: number | null;
  /** ms to compile one kernel on this backend (WebGPU: a few probe kernels' first run minus their second), or null. */
  kernelCompileMs: number | null;
  /**
   * When the warm-up was not run because it could not finish within the cap: the least it would
   * take (distinct kernels of a step × `kernelCompileMs`), ms. Null when it ran.
   */
  warmupAtLeastMs: number | null;
  /** Why a step failed, or null. */
  error: string | null;
}

/** The trainer's backend, chosen by measurement, and the figures it was chosen by. */
export interface BackendChoice {
  /** The fastest measured backend. */
  backend: BackendName;
  /** Every backend measured, in measurement order. */
  timings: BackendTiming[];
  /** Figures for the badge, fastest first: "webgpu 14 ms · wasm 54 ms / step". */
  label: string;
  /** ms the whole measurement took, starting each backend included. */
  ms: number;
}

/**
 * The cap of the next backend's warm-up: what is left of the budget, shared by the backends left,
 * and never less than an even share of the whole (a slow first backend does not starve the next).
 */
export function capFor(plan: MeasurePlan, spentMs: number, backendsLeft: number): number {
  const share = plan.budgetMs / Math.max(1, plan.order.length);
  return Math.max(share, (plan.budgetMs - spentMs) / Math.max(1, backendsLeft));
}

/**
 * The least a backend's warm-up takes: every distinct kernel of a training step (as profiled on
 * a backend measured before) compiled once at `kernelCompileMs`. A backend that compiles slowly
 * (a software WebGPU adapter) is passed over on this without compiling the whole step, whose
 * shader compilation would otherwise go on, in the browser's GPU process, long after it was cut.
 */
export function warmupAtLeast(kernelCompileMs: number, distinctKernels: number): number {
  return kernelCompileMs * distinctKernels;
}

/** What `timeSteps` saw. */
export interface StepTimes {
  warmupMs: number | null;
  stepMs: number[];
  cutAfterMs: number | null;
  error: string | null;
}

export interface TimeStepsOptions {
  /** The warm-up must finish within this many ms, or the backend is stopped. */
  capMs: number;
  timedSteps: number;
  /** Stops the backend's work in flight (WebGPU: its device is destroyed, its read rejects). */
  abort: () => Promise<void> | void;
  abortGraceMs: number;
  clock?: () => number;
}

/** A promise that resolves to 'late' after `ms`, and its cancel. */
function timer(ms: number): { late: Promise<'late'>; cancel: () => void } {
  let id: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'late'>((r) => (id = setTimeout(() => r('late'), ms)));
  return { late, cancel: () => clearTimeout(id) };
}

/**
 * Times `step`: a warm-up, then `timedSteps` more. The warm-up races the cap: when the cap comes
 * first the backend is aborted (a step in flight cannot be left running while another backend
 * takes over) and has no figure. The first timed step always runs, so that a backend that warmed
 * up has a figure; later ones start only before the cap.
 */
export async function timeSteps(step: () => Promise<unknown>, opts: TimeStepsOptions): Promise<StepTimes> {
  const clock = opts.clock ?? (() => performance.now());
  const deadline = clock() + opts.capMs;
  const out: StepTimes = { warmupMs: null, stepMs: [], cutAfterMs: null, error: null };
  // Warm-up, raced against the cap.
  const w0 = clock();
  const warmup = step().then(
    () => 'done' as const,
    (err: unknown) => ({ error: errorMessage(err) }),
  );
  const cap = timer(Math.max(0, deadline - w0));
  const first = await Promise.race([warmup, cap.late]);
  cap.cancel();
  if (first === 'late') {
    out.cutAfterMs = clock() - w0;
    await opts.abort();
    const grace = timer(opts.abortGraceMs);
    await Promise.race([warmup, grace.late]);
    grace.cancel();
    return out;
  }
  if (first !== 'done') return { ...out, error: first.error };
  out.warmupMs = clock() - w0;
  for (let i = 0; i < opts.timedSteps && (i === 0 || clock() < deadline); i++) {
    const t0 = clock();
    try {
      await step();
    } catch (err) {
      out.error = errorMessage(err);
      break;
    }
    out.stepMs.push(clock() - t0);
  }
  return out;
}

function median(xs: readonly number[]): number | null {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? null) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

/** One backend's timing from what `timeSteps` saw. */
export function timingOf(
  backend: BackendName,
  times: StepTimes,
  capMs: number,
  kernelCompileMs: number | null = null,
): BackendTiming {
  return {
    kernelCompileMs,
    warmupAtLeastMs: null,
    backend,
    msPerStep: times.error === null ? median(times.stepMs) : null,
    warmupMs: times.warmupMs,
    steps: times.stepMs.length,
    capMs,
    cutAfterMs: times.cutAfterMs,
    error: times.error,
  };
}

/** A backend whose warm-up was not run: it could not finish within `capMs` (see `warmupAtLeast`). */
export function skippedTiming(
  backend: BackendName,
  capMs: number,
  kernelCompileMs: number,
  warmupAtLeastMs: number,
): BackendTiming {
  return {
    backend,
    msPerStep: null,
    warmupMs: null,
    steps: 0,
    capMs,
    cutAfterMs: null,
    kernelCompileMs,
    warmupAtLeastMs,
    error: null,
  };
}

/** The fastest backend with a figure (the earlier in `BACKEND_ORDER` on a tie), or null when none has one. */
export function chooseBackend(timings: readonly BackendTiming[]): BackendName | null {
  let best: BackendTiming | null = null;
  for (const t of timings) {
    if (t.msPerStep === null) continue;
    if (
      !best ||
      best.msPerStep === null ||
      t.msPerStep < best.msPerStep ||
      (t.msPerStep === best.msPerStep &&
        BACKEND_ORDER.indexOf(t.backend) < BACKEND_ORDER.indexOf(best.backend))
    )
      best = t;
  }
  return best?.backend ?? null;
}

export function formatMs(ms: number): string {
  return ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}

/** A backend with no figure, for the badge: "webgpu warm-up > 3.7 s", "webgpu failed". */
function noFigure(t: BackendTiming): string {
  const atLeast = t.warmupAtLeastMs ?? t.cutAfterMs;
  return atLeast === null ? `${t.backend} failed` : `${t.backend} warm-up > ${formatMs(atLeast)}`;
}

/**
 * The badge's figures: ms per step, fastest first ("webgpu 14 ms · wasm 54 ms / step"), then the
 * backends with none ("· webgpu warm-up > 3700 ms").
 */
export function choiceLabel(timings: readonly BackendTiming[]): string {
  const measured = timings
    .filter((t) => t.msPerStep !== null)
    .sort((a, b) => (a.msPerStep ?? 0) - (b.msPerStep ?? 0));
  const parts = measured.length
    ? [`${measured.map((t) => `${t.backend} ${formatMs(t.msPerStep ?? 0)}`).join(' · ')} / step`]
    : [];
  return [...parts, ...timings.filter((t) => t.msPerStep === null).map(noFigure)].join(' · ');
}

/** Assembles the choice, or null when no backend has a figure. */
export function backendChoice(timings: BackendTiming[], ms: number): BackendChoice | null {
  const backend = chooseBackend(timings);
  return backend ? { backend, timings, label: choiceLabel(timings), ms } : null;
}

/** Why a measured backend is not the one chosen, as the page's notice says it. */
export function passedOverReason(t: BackendTiming, choice: BackendChoice): string {
  const chosen = choice.timings.find((c) => c.backend === choice.backend);
  const against =
    chosen?.msPerStep != null ? ` against ${formatMs(chosen.msPerStep)} on ${choice.backend}` : '';
  if (t.error !== null) return `its training step failed while measuring: ${t.error}`;
  if (t.warmupAtLeastMs !== null)
    return (
      `measured slower: compiling one of its kernels took ${formatMs(t.kernelCompileMs ?? 0)}, so its first ` +
      `training step would take over ${formatMs(t.warmupAtLeastMs)} (past its cap: ${formatMs(t.capMs)})${against}; ` +
      `it was not run`
    );
  if (t.cutAfterMs !== null)
    return (
      `measured slower: its first training step (which compiles its kernels) had not finished after ` +
      `${formatMs(t.cutAfterMs)} (its cap: ${formatMs(t.capMs)})${against}, so it was stopped`
    );
  return `measured slower: ${t.msPerStep === null ? 'no figure' : formatMs(t.msPerStep)} per training step${against}`;
}

/** One line per backend for the badge's tooltip. */
function detail(t: BackendTiming): string {
  if (t.error !== null) return `${t.backend}: failed (${t.error})`;
  if (t.warmupAtLeastMs !== null)
    return (
      `${t.backend}: ${formatMs(t.kernelCompileMs ?? 0)} to compile a kernel, so over ` +
      `${formatMs(t.warmupAtLeastMs)} before a first step (cap ${formatMs(t.capMs)}): not run`
    );
  if (t.cutAfterMs !== null)
    return `${t.backend}: warm-up step not finished after ${formatMs(t.cutAfterMs)} (cap ${formatMs(t.capMs)}), stopped`;
  const warm = t.warmupMs === null ? '' : `, warm-up ${formatMs(t.warmupMs)}`;
  return `${t.backend}: ${formatMs(t.msPerStep ?? 0)} per step (median of ${t.steps}${warm})`;
}

/** The badge's tooltip: how the backend was chosen, with every backend's figures. */
export function choiceTitle(choice: BackendChoice | null, plan: MeasurePlan = MEASURE_PLAN): string {
  if (!choice)
    return 'Not measured: the URL (?backend=…) chose the backend, or no measured backend could train.';
  return [
    `Chosen by measurement when the trainer started (${formatMs(choice.ms)}): a warm-up and ` +
      `${plan.timedSteps} timed training steps of the policy on each backend, about ` +
      `${plan.budgetMs / 1000} s in all; the fastest trains. ?backend=… forces one.`,
    ...choice.timings.map(detail),
  ].join('\n');
}
