/**
 * Staleness control of the asynchronous pipeline (DESIGN §5, AReaL's `max_head_offpolicyness`).
 * Units are whatever the pipeline schedules (here: groups of episodes of one task); `batch` is
 * how many of them one training step consumes.
 */

/** What the admission rule reads. */
export interface AdmissionState {
  /** Current policy version: updates published so far (version 0 is the initial policy). */
  version: number;
  /** Units finished and kept for training (consumed or waiting; stale drops excluded). */
  accepted: number;
  /** Units in flight in rollout workers. */
  running: number;
}

export interface AdmissionLimits {
  /** Slots that can run at once (workers × slots per worker, live workers only). */
  maxConcurrent: number;
  /** Max staleness η in versions: 0 is synchronous training, `Infinity` unbounded. */
  eta: number;
  /** Units per training batch (B). */
  batch: number;
}

/**
 * How many more units may start now:
 * `min(maxConcurrent − running, (η + v + 1)·B − (accepted + running))`, never below 0. With
 * η = 0 exactly one batch is generated per version: rollout and training alternate.
 */
export function admissionCapacity(s: AdmissionState, l: AdmissionLimits): number {
  const slots = l.maxConcurrent - s.running;
  const ahead = Number.isFinite(l.eta)
    ? (l.eta + s.version + 1) * l.batch - (s.accepted + s.running)
    : Infinity;
  return Math.max(0, Math.min(slots, ahead));
}

/** Free slots the staleness bound keeps idle now: slots no job may start in until a version is published. */
export function slotsHeldByEta(s: AdmissionState, l: AdmissionLimits): number {
  return Math.max(0, l.maxConcurrent - s.running) - admissionCapacity(s, l);
}

/** Versions between the trainer's current version and the oldest token of a sample. */
export function staleness(trainerVersion: number, oldestTokenVersion: number): number {
  return trainerVersion - oldestTokenVersion;
}

/** True when a sample is too old to train on: its oldest token is more than η versions behind. */
export function isStale(trainerVersion: number, oldestTokenVersion: number, eta: number): boolean {
  return staleness(trainerVersion, oldestTokenVersion) > eta;
}

/** Oldest version stamped on any token the policy wrote (−1 marks observation tokens; ignored). */
export function oldestVersion(versions: readonly number[]): number {
  let min = Infinity;
  for (const v of versions) if (v >= 0 && v < min) min = v;
  return Number.isFinite(min) ? min : -1;
}
