import { PageStorage } from '../run/browser';
import { CustomEnvState } from './custom-env-state.svelte';
import { RunState } from './run-state.svelte';
import { TasksState } from './tasks-state.svelte';
import type { TrainerState } from './trainer-state.svelte';

/** The panels that store, as the page makes them: over the main thread's one IndexedDB connection. */
export function storingStates(trainer: TrainerState): {
  tasks: TasksState;
  customEnv: CustomEnvState;
  run: RunState;
} {
  const storage = new PageStorage();
  const tasks = new TasksState(storage);
  const customEnv = new CustomEnvState(trainer, storage);
  const run = new RunState(trainer, storage);
  return { tasks, customEnv, run };
}
