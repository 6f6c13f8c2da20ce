import type { CustomEnvState } from './lib/ui/custom-env-state.svelte';
import type { FeedState } from './lib/ui/feed-state.svelte';
import type { RunState } from './lib/ui/run-state.svelte';
import type { SandboxState } from './lib/ui/sandbox-state.svelte';
import type { TasksState } from './lib/ui/tasks-state.svelte';
import type { TrainerState } from './lib/ui/trainer-state.svelte';

declare global {
  interface Window {
    /** Present only with the `?debug` URL flag: the page's state, for e2e tests and the bench. */
    __lab?: {
      trainer: TrainerState;
      sandbox: SandboxState;
      tasks: TasksState;
      /** Made as the Custom env view mounts (opened, or the page idle): reading it before throws. */
      customEnv: CustomEnvState;
      run: RunState;
      /** The program feed of the run (`run.feed`). */
      feed: FeedState;
    };
  }
}
