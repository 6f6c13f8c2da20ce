import type { HoldView } from '../pipeline/hold';
import type { CodeRun } from '../run/code-run';

/** What the hold's view needs of the code run: its events, where its hold stands, and the actions. */
export type HoldRun = Pick<CodeRun, 'subscribe' | 'hold' | 'pause' | 'unpause' | 'step'>;

/**
 * The run panel's Pause / Resume / Step of the running run, and its status line. View state only:
 * the run layer (`CodeRun`, the pipeline's `hold.ts`) holds the pipeline and tells this where it stands.
 */
export class HoldState {
  /** Where the running run's Pause / Step stand (null while no run is running). */
  view = $state.raw<HoldView | null>(null);

  constructor(private readonly run: HoldRun) {
    run.subscribe((e) => {
      if (e.kind === 'hold') this.view = e.hold;
      else if (e.kind === 'state') this.view = run.hold; // running: 'running'; anything else: null
    });
  }

  /** Held and still: the published version and the stored samples do not change until Resume or Step. */
  get paused(): boolean {
    return this.view?.mode === 'paused';
  }

  /** Held or holding (the work in progress still finishing): Resume applies, not Pause. */
  get held(): boolean {
    return this.view?.mode === 'paused' || this.view?.mode === 'pausing';
  }

  /** A Step is under way (another is refused until it holds). */
  get stepping(): boolean {
    return this.view?.mode === 'stepping';
  }

  /** The status line: empty while the run goes on as usual (or none runs). */
  get status(): string {
    const v = this.view;
    if (!v || v.mode === 'running') return '';
    if (v.mode === 'stepping') return `Stepping… (to version ${v.target})`;
    if (v.mode === 'pausing') return `Pausing… (at version ${v.version}, the work in progress finishes)`;
    return `Paused at version ${v.version}`;
  }

  /** Holds the run at its next boundary; false when no run is running. */
  pause(): boolean {
    return this.run.pause();
  }

  /** Lets a paused run go on as before; false when no run is running. */
  resume(): boolean {
    return this.run.unpause();
  }

  /** Trains exactly one more version, then holds; false when no run is running or a step is under way. */
  step(): boolean {
    return this.run.step();
  }
}
