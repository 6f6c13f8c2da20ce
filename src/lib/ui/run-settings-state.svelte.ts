import { errorMessage } from '../errors';
import type { TaskSuite } from '../env/suite';
import { defaultRunConfig, type RunConfig } from '../config/run-config';
import { machineCores } from '../run/dashboard';

/**
 * The run panel's settings as the page edits them: the suite chosen (followed as it is edited),
 * share links made of them or taken from the URL, and what the panel says (its error, notices).
 */
export class RunSettingsState {
  /** A run is in progress (a chosen suite edited meanwhile is not copied into its settings). */
  running = $state(false);
  error = $state<string | null>(null);
  /** Things the user should know that did not stop the run (evictions, restarts). */
  notices = $state.raw<string[]>([]);
  settings = $state<RunConfig>(defaultRunConfig(machineCores()));
  /** The last share link made of the settings (`makeShareLink`), or null. */
  shareLink = $state<string | null>(null);
  /** Whether the browser let the share link be copied to the clipboard. */
  shareLinkCopied = $state(false);
  /** A chosen saved suite is copied again when it is edited (`syncSavedSuites`). */
  protected tasksFollowSaved = false;

  /** Adds a notice (the newest five stay); the same text again moves to the end rather than repeat. */
  notify(message: string): void {
    this.notices = [...this.notices.filter((n) => n !== message).slice(-4), message];
  }

  /** Chooses what new runs train on: a saved suite (followed as it is edited), or null for the built-in tasks. */
  chooseTasks(suite: TaskSuite | null): void {
    this.settings.task.suite = suite ? structuredClone(suite) : null;
    this.tasksFollowSaved = suite !== null;
  }

  /** The page's saved suites as they are now: a chosen saved suite that was edited is copied again. */
  syncSavedSuites(saved: readonly TaskSuite[]): void {
    const chosen = this.settings.task.suite;
    if (!chosen || !this.tasksFollowSaved || this.running) return;
    const now = saved.find((s) => s.name === chosen.name);
    if (now && JSON.stringify(now) !== JSON.stringify(chosen))
      this.settings.task.suite = structuredClone(now);
  }

  /** Takes the settings of a share link (its `?run=`; null: none), or says what is wrong with it. */
  async applyShareLink(param: string | null): Promise<void> {
    if (param === null) return;
    try {
      // Reading a link is a chunk of its own, fetched only for a page opened from one.
      const { settingsFromShare } = await import('../config/share-link');
      this.settings = await settingsFromShare(param);
      this.tasksFollowSaved = false;
      this.notify(`Settings from the share link (seed ${this.settings.seed}).`);
    } catch (err) {
      this.error = errorMessage(err);
    }
  }

  /** A link to this page with the current settings, copied where the browser allows; none for settings a run refuses. */
  async makeShareLink(base: string): Promise<string | null> {
    const settings = $state.snapshot(this.settings) as RunConfig;
    let link: string;
    let share: typeof import('../run/share');
    try {
      // Making a link is a chunk of its own, fetched on the first press.
      share = await import('../run/share');
      link = await share.shareLinkFor(base, settings);
    } catch (err) {
      this.shareLink = null;
      this.error = `no share link: ${errorMessage(err)}`;
      return null;
    }
    // Settings edited while the link was deflated: it would share the old ones, so none is shown.
    if (JSON.stringify($state.snapshot(this.settings)) !== JSON.stringify(settings)) return null;
    if (this.error?.startsWith('no share link:')) this.error = null; // an earlier run's error stays
    this.shareLink = link;
    this.shareLinkCopied = await share.copied(link);
    return link;
  }
}
