import { lazyModule } from '../lazy';
import { errorMessage } from '../errors';
import { PageStorage } from '../run/browser';
import type { CustomEnvState } from './custom-env-state.svelte';
import { RunState } from './run-state.svelte';
import { TasksState } from './tasks-state.svelte';
import type { TrainerState } from './trainer-state.svelte';

/** The panels that store, as the page makes them: over the main thread's one IndexedDB connection. */
export function storingStates(trainer: TrainerState): {
  tasks: TasksState;
  /**
   * The custom trainings' panel (the Custom env view): a chunk of its own, made the first time it
   * is asked for, its stored trainings read then.
   */
  customEnv: () => Promise<CustomEnvState>;
  run: RunState;
} {
  const storage = new PageStorage();
  const tasks = new TasksState(storage);
  const customEnv = lazyModule(async () => {
    const env = new (await import('./custom-env-state.svelte')).CustomEnvState(trainer, storage);
    env.loadTrainings().catch((err: unknown) => {
      env.error = `stored custom trainings could not be read: ${errorMessage(err)}`;
    });
    return env;
  });
  const run = new RunState(trainer, storage);
  return { tasks, customEnv, run };
}
