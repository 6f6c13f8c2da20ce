import type { Lane, TimelineEvent } from '../pipeline/events';

/** The p-th percentile (0–100) of `xs` by nearest rank; NaN when empty. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? NaN;
}

/**
 * Publish → every rollout lane running the new version, per published version (ms): from each
 * `publish` event's end (the announce) to the first `adopt` of that version or a newer one on
 * every lane in `lanes` that was already running a version when it was published (a worker that
 * joins later loads the version from the store; that is start-up, not adoption). Versions some
 * live lane never reached are left out.
 */
export function adoptionLatencies(events: readonly TimelineEvent[], lanes: readonly Lane[]): number[] {
  const published = new Map<number, number>();
  const adopts = new Map<Lane, { t: number; version: number }[]>();
  for (const e of events) {
    if (e.kind === 'publish' && e.lane === 'store') published.set(e.version, e.t1);
    if (e.kind === 'adopt' && lanes.includes(e.lane)) {
      const list = adopts.get(e.lane) ?? [];
      list.push({ t: e.t1, version: e.version });
      adopts.set(e.lane, list);
    }
  }
  const out: number[] = [];
  for (const [version, at] of published) {
    let worst = -Infinity;
    for (const lane of lanes) {
      const list = adopts.get(lane) ?? [];
      if (!list.some((a) => a.t < at - 1)) continue; // not running yet
      const first = list.filter((a) => a.version >= version && a.t >= at - 1);
      if (first.length === 0) {
        worst = NaN;
        break;
      }
      worst = Math.max(worst, Math.min(...first.map((a) => a.t)) - at);
    }
    if (Number.isFinite(worst)) out.push(Math.max(0, worst));
  }
  return out;
}

/** Total time covered by the union of the spans picked by `pick`, ms. */
export function coveredMs(events: readonly TimelineEvent[], pick: (e: TimelineEvent) => boolean): number {
  const spans = events
    .filter((e) => pick(e) && e.t1 > e.t0)
    .map((e) => [e.t0, e.t1] as const)
    .sort((a, b) => a[0] - b[0]);
  let total = 0;
  let end = -Infinity;
  let start = -Infinity;
  for (const [a, b] of spans) {
    if (a > end) {
      if (end > start) total += end - start;
      start = a;
      end = b;
    } else end = Math.max(end, b);
  }
  if (end > start) total += end - start;
  return total;
}

/** Time during which a span picked by `a` and a span picked by `b` both run, ms (0: never overlap). */
export function overlapMs(
  events: readonly TimelineEvent[],
  a: (e: TimelineEvent) => boolean,
  b: (e: TimelineEvent) => boolean,
): number {
  return coveredMs(events, a) + coveredMs(events, b) - coveredMs(events, (e) => a(e) || b(e));
}

/** How many cores of the machine were busy, on average, from `t0` to `t1` (epoch ms). */
export interface CpuSample {
  t0: number;
  t1: number;
  busyCores: number;
}

/** Busy core-milliseconds within [from, to]: each sample counts for the part it overlaps. */
export function busyCoreMs(samples: readonly CpuSample[], from: number, to: number): number {
  let total = 0;
  for (const s of samples) {
    const overlap = Math.min(to, s.t1) - Math.max(from, s.t0);
    if (overlap > 0) total += overlap * s.busyCores;
  }
  return total;
}

/** One iteration of a synchronous run: when its rollout and its training ran (epoch ms). */
export interface SyncPhase {
  rollout: readonly [number, number];
  train: readonly [number, number];
}

/**
 * The speedup overlapping rollout and training could reach on `cores` cores, from a synchronous
 * run's phases and the cores the machine kept busy in them, averaged over the iterations:
 * (R + T) / max(R, T, W / cores), W being the busy core-ms of both phases. The ideal speedup,
 * (R + T) / max(R, T), gives each side hardware of its own; overlapped on one machine, the two
 * sides share its cores, and this bound counts the CPU work each did. NaN without phases.
 */
export function coreBoundSpeedup(
  phases: readonly SyncPhase[],
  samples: readonly CpuSample[],
  cores: number,
): number {
  const ratios = phases.map(({ rollout, train }) => {
    const r = rollout[1] - rollout[0];
    const t = train[1] - train[0];
    const work = busyCoreMs(samples, rollout[0], rollout[1]) + busyCoreMs(samples, train[0], train[1]);
    return (r + t) / Math.max(1e-9, r, t, work / cores);
  });
  return ratios.length ? ratios.reduce((a, b) => a + b, 0) / ratios.length : NaN;
}

/** What `stepThroughput` reads of each training step (a `StepReport`). */
export interface StepTiming {
  /** Episodes trained on in the step. */
  episodes: number;
  /** Trainer idle before the step (waiting for data), and training + publishing, ms. */
  waitMs: number;
  trainMs: number;
  /** Epoch ms the step finished. */
  at: number;
}

/** Throughput of a run over its steps up to the one that reached `samples` trained episodes. */
export interface Throughput {
  /** The steps counted: from the second one (the first carries start-up) to that one. */
  counted: number;
  /** Epoch ms the first step finished: the counted time starts there. */
  from: number;
  trained: number;
  seconds: number;
  samplesPerSec: number;
  /** ms the trainer computed (training + publishing) in the counted steps. */
  busyMs: number;
  /** Fraction of the counted time the trainer computed (training + publishing). */
  trainerBusy: number;
  /** Mean of (rollout + train) / max(rollout, train) over the counted steps. */
  idealSpeedup: number;
}

/**
 * Trained episodes per second from the end of the first step (start-up — workers, shader
 * compilation, the first publish — left out) to the step that reached `samples`, with the
 * trainer's busy share and the ideal overlap speedup of the same steps (the sync-vs-async race
 * and the pipeline bench).
 */
export function stepThroughput(steps: readonly StepTiming[], samples: number): Throughput {
  let upTo = steps.length;
  for (let i = 0, n = 0; i < steps.length; i++) {
    n += steps[i]?.episodes ?? 0;
    if (n >= samples) {
      upTo = i + 1;
      break;
    }
  }
  const counted = steps.slice(1, upTo);
  const from = steps[0]?.at ?? 0;
  const seconds = ((counted.at(-1)?.at ?? from) - from) / 1000;
  const trained = counted.reduce((n, s) => n + s.episodes, 0);
  const busyMs = counted.reduce((n, s) => n + s.trainMs, 0);
  const phases = counted.map((s) => (s.waitMs + s.trainMs) / Math.max(1, Math.max(s.waitMs, s.trainMs)));
  return {
    counted: counted.length,
    from,
    trained,
    seconds,
    samplesPerSec: trained / Math.max(1e-3, seconds),
    busyMs,
    trainerBusy: busyMs / Math.max(1, seconds * 1000),
    idealSpeedup: phases.reduce((a, b) => a + b, 0) / Math.max(1, phases.length),
  };
}

/** What `policyLag` reads of each training step (a `StepReport`). */
export interface StepLag {
  /** Version the step published: it trained from `version − 1`. */
  version: number;
  /** Episodes trained in the step. */
  episodes: number;
  /** Per trained group: versions behind the trainer of its oldest token. */
  staleness: readonly number[];
}

/** How far behind the trainer the trained samples were, in versions and in samples. */
export interface PolicyLag {
  /** Mean over trained groups of their staleness (versions). */
  meanVersions: number | null;
  /**
   * Mean over trained groups of PipelineRL's lag in samples: episodes the trainer trained on
   * between the publish of the group's behaviour version (its oldest token's) and the step
   * that trains it. At η = 0 it is 0; it grows with the batch as well as with the versions.
   */
  meanSamples: number | null;
}

/**
 * The policy lag of a run's steps (in order of version). A group `s` versions stale in the step
 * that publishes `v` was written by version `v − 1 − s`; the samples trained since are those of
 * the steps that published `v − s` … `v − 1`. Steps missing from `steps` (a resumed run's
 * history cut short) count no samples.
 */
export function policyLag(steps: readonly StepLag[]): PolicyLag {
  const trained = new Map<number, number>();
  for (const s of steps) trained.set(s.version, (trained.get(s.version) ?? 0) + s.episodes);
  const versions = [...trained.keys()];
  const lo = Math.min(0, ...versions);
  const hi = Math.max(0, ...versions);
  // upTo[v − lo]: episodes trained by the steps that published versions lo … v.
  const upTo: number[] = [];
  for (let v = lo, sum = 0; v <= hi; v++) upTo.push((sum += trained.get(v) ?? 0));
  const cum = (v: number) => (v < lo ? 0 : (upTo[Math.min(v, hi) - lo] ?? 0));
  let groups = 0;
  let versionsSum = 0;
  let samplesSum = 0;
  for (const s of steps) {
    for (const stale of s.staleness) {
      groups += 1;
      versionsSum += stale;
      samplesSum += cum(s.version - 1) - cum(s.version - 1 - stale);
    }
  }
  return groups === 0
    ? { meanVersions: null, meanSamples: null }
    : { meanVersions: versionsSum / groups, meanSamples: samplesSum / groups };
}

/** How many turns a run's episodes took: the long tail a synchronous step waits on. */
export interface TurnSpread {
  /** Episodes counted. */
  episodes: number;
  /** Mean, median, 95th percentile and most turns of an episode (NaN without episodes). */
  mean: number;
  p50: number;
  p95: number;
  max: number;
  /** Share of the episodes that took 1, 2, … `maxTurns` turns (index k: k + 1 turns). */
  shares: number[];
  /**
   * Mean over groups of their longest episode's turns: a group's episodes decode together, so a
   * group lasts as long as its longest episode (NaN without groups).
   */
  meanGroupMax: number;
}

/** The spread of the turns of the episodes of `groups` (each group's episodes' turns), 1 … `maxTurns`. */
export function turnSpread(groups: readonly (readonly number[])[], maxTurns: number): TurnSpread {
  const turns = groups.flat();
  const nonEmpty = groups.filter((g) => g.length > 0);
  const shares = Array.from(
    { length: maxTurns },
    (_, k) => turns.filter((t) => t === k + 1).length / Math.max(1, turns.length),
  );
  return {
    episodes: turns.length,
    mean: turns.length ? turns.reduce((a, b) => a + b, 0) / turns.length : NaN,
    p50: percentile(turns, 50),
    p95: percentile(turns, 95),
    max: turns.length ? Math.max(...turns) : NaN,
    shares,
    meanGroupMax: nonEmpty.length ? nonEmpty.reduce((a, g) => a + Math.max(...g), 0) / nonEmpty.length : NaN,
  };
}
