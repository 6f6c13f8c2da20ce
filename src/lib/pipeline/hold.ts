/**
 * Pause, Resume and Step of a running pipeline (DESIGN §6): whether the controller may start new
 * work. Held, it admits no rollout job and feeds the trainer no batch; the work in progress
 * finishes (a running job is played and kept, the trainer's step publishes its version), so
 * nothing is lost and nothing runs twice. Stepping runs as usual until the trainer publishes its
 * target version, then holds.
 */

/** What the run was asked: go on, hold, or go on until `target` is published and hold. */
export type Hold = { kind: 'running' } | { kind: 'paused' } | { kind: 'stepping'; target: number };

/** Where a run's Pause / Step stands, as its view shows it. */
export interface HoldView {
  /** `pausing`: held, but a job or the trainer's step is still finishing; `paused`: nothing moves. */
  mode: 'running' | 'pausing' | 'paused' | 'stepping';
  /** The latest published version. */
  version: number;
  /** Stepping: the version it holds at (null otherwise). */
  target: number | null;
}

export const RUNNING: Hold = { kind: 'running' };

/** Where `hold` stands once `version` is published: a step holds at its target (or past it). */
export function holdAt(hold: Hold, version: number): Hold {
  return hold.kind === 'stepping' && version >= hold.target ? { kind: 'paused' } : hold;
}

/** Whether new work (a rollout job, a training batch) may start at `version`. */
export function admits(hold: Hold, version: number): boolean {
  return holdAt(hold, version).kind !== 'paused';
}

/**
 * Step: exactly one version past where the pipeline holds, which is `version`, or the version the
 * trainer's step in flight publishes (`trainerBusy`: a Step while running first pauses). Null
 * while a step is under way (it is not stretched to two).
 */
export function stepFrom(hold: Hold, version: number, trainerBusy: boolean): Hold | null {
  if (holdAt(hold, version).kind === 'stepping') return null;
  return { kind: 'stepping', target: version + (trainerBusy ? 2 : 1) };
}

/** The view of `hold` at `version`; `busy`: a rollout job runs or the trainer computes a step. */
export function holdView(hold: Hold, version: number, busy: boolean): HoldView {
  const h = holdAt(hold, version);
  const mode = h.kind === 'paused' ? (busy ? 'pausing' : 'paused') : h.kind;
  return { mode, version, target: h.kind === 'stepping' ? h.target : null };
}

/** What the hold reads of its pipeline. */
export interface HoldHost {
  readonly version: number;
  readonly runningGroups: number;
  readonly inFlight: object | null;
  /** Schedules again (new work starts where the hold now admits it). */
  tick(): void;
}

/** The pipeline's hold: Pause, Resume, Step, and telling its view where it stands when that changes. */
export class HoldControl {
  private hold: Hold = RUNNING;
  private told: HoldView = { mode: 'running', version: 0, target: null };

  constructor(
    private readonly host: HoldHost,
    private readonly tell: (view: HoldView) => void,
  ) {}

  /** Holds at the next boundary (a step under way is given up). */
  pause(): void {
    this.hold = { kind: 'paused' };
    this.host.tick();
  }

  /** Goes on as before the Pause. */
  resume(): void {
    this.hold = RUNNING;
    this.host.tick();
  }

  /** Trains one more version, then holds; false while a step is under way. */
  step(): boolean {
    const next = stepFrom(this.hold, this.host.version, this.host.inFlight !== null);
    if (!next) return false;
    this.hold = next;
    this.host.tick();
    return true;
  }

  /** Whether new work may start now. */
  admits(): boolean {
    return admits(this.hold, this.host.version);
  }

  view(): HoldView {
    const busy = this.host.runningGroups > 0 || this.host.inFlight !== null;
    return holdView(this.hold, this.host.version, busy);
  }

  /** Tells the view where the hold stands, when that changed (a running run's new versions are not news). */
  report(): void {
    const v = this.view();
    const t = this.told;
    if (v.mode === t.mode && (v.mode === 'running' || (v.version === t.version && v.target === t.target)))
      return;
    this.told = v;
    this.tell(v);
  }
}
