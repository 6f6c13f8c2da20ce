import type { EvalTask } from '../env/evaluate';
import { errorMessage } from '../errors';
import { VersionGone } from '../run/evaluations';
import { defaultTask, playedSummary, taskGroups, versionChoices, type TaskGroup } from '../view/greedy-play';
import type { FeedEpisode } from '../view/program-feed';

/** What the control plays through: the run shown (`RunState`), or a fake in tests. */
export interface GreedyPlayer {
  readonly runId: string | null;
  /** The tasks a version of the run shown can be played on. */
  readonly playTasks: EvalTask[];
  storedVersions(): Promise<number[]>;
  playGreedily(version: number, taskId: string, onLoaded?: () => void): Promise<FeedEpisode>;
}

/**
 * Where the control stands: `listing` the stored versions are read, `loading` the worker loads
 * the version, `playing` it plays the episode, `done` the episode is in the feed, `error` it
 * failed (`message` says why).
 */
export type PlayPhase = 'idle' | 'listing' | 'loading' | 'playing' | 'done' | 'error';

/**
 * The view state of the feed's "Play greedily" control (behaviour at a checkpoint): the stored
 * versions of the run shown and its tasks to choose from, the choice, and how the play went.
 */
export class GreedyPlayState {
  versions = $state.raw<{ version: number; label: string }[]>([]);
  /** The chosen version, or null while the run has none stored. */
  version = $state<number | null>(null);
  taskId = $state('');
  phase = $state<PlayPhase>('idle');
  /** What the control says of its phase: progress, the result, or the error. */
  message = $state('');
  /** The run whose versions `versions` lists. */
  listedRun = $state<string | null>(null);
  readonly #groups = $derived.by(() => taskGroups(this.player.playTasks));

  constructor(private readonly player: GreedyPlayer) {}

  /** The run's tasks by split, for the task list. */
  get groups(): TaskGroup[] {
    return this.#groups;
  }

  /** A list is being read or a play is in flight: Play waits. */
  get busy(): boolean {
    return this.phase === 'listing' || this.phase === 'loading' || this.phase === 'playing';
  }

  /** The version is being loaded or played: the choices wait. */
  get playing(): boolean {
    return this.phase === 'loading' || this.phase === 'playing';
  }

  /** Whether Play can start now: a run shown, a version and a task chosen, nothing in flight. */
  get ready(): boolean {
    return !this.busy && this.player.runId !== null && this.version !== null && this.taskId !== '';
  }

  /**
   * Reads the run's stored versions: the chosen one stays chosen while it is stored, else the
   * newest is; a task not of the run gives way to its first held-out task. `quiet`: no progress
   * message (a refresh as the version list gets focus).
   */
  async list(quiet = false): Promise<void> {
    if (this.busy) return;
    const runId = this.player.runId;
    this.listedRun = runId;
    this.phase = 'listing';
    if (!quiet) this.message = 'Reading the stored versions…';
    try {
      this.versions = runId ? versionChoices(await this.player.storedVersions()) : [];
      this.phase = 'idle';
      if (!runId) this.message = 'Train a run, or show a stored one on Runs, to play its versions.';
      else if (!this.versions.length) this.message = `${runId} has no stored version yet.`;
      else if (!quiet) this.message = '';
    } catch (err) {
      this.versions = [];
      this.fail(`the stored versions could not be read: ${errorMessage(err)}`);
    }
    if (!this.versions.some((v) => v.version === this.version))
      this.version = this.versions[0]?.version ?? null;
    if (!this.groups.some((g) => g.tasks.some((t) => t.id === this.taskId)))
      this.taskId = defaultTask(this.groups);
  }

  /** Plays the chosen version on the chosen task; the episode goes to the feed. */
  async play(): Promise<void> {
    const version = this.version;
    if (!this.ready || version === null) return;
    const task = this.taskId;
    this.phase = 'loading';
    this.message = `Loading v${version}…`;
    try {
      const episode = await this.player.playGreedily(version, task, () => {
        this.phase = 'playing';
        this.message = `Playing v${version} greedily on ${task}…`;
      });
      this.phase = 'done';
      this.message = `Played ${playedSummary(episode)}`;
    } catch (err) {
      if (err instanceof VersionGone) {
        this.phase = 'idle';
        await this.list();
        this.fail(`v${version} is no longer stored: retention pruned it. Choose another version.`);
      } else this.fail(`v${version} could not be played: ${errorMessage(err)}`);
    }
  }

  private fail(message: string): void {
    this.phase = 'error';
    this.message = message;
  }
}
