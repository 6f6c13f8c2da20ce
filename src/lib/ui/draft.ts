/**
 * Text the user writes in the page's editors (an environment's code, a task, a program), kept in
 * localStorage so that a reload or a closed tab does not lose it. Best effort: where storage is
 * unavailable (a private window's policy) or full, the editor works as before, unsaved.
 */
export class Draft {
  constructor(
    /** The localStorage key (one per editor). */
    private readonly key: string,
  ) {}

  /** The saved text, or `fallback` when nothing (or nothing readable) is saved. */
  load(fallback: string): string {
    try {
      return globalThis.localStorage?.getItem(this.key) ?? fallback;
    } catch {
      return fallback;
    }
  }

  save(text: string): void {
    try {
      globalThis.localStorage?.setItem(this.key, text);
    } catch {
      // Unsaved: the text stays in the editor for this visit.
    }
  }
}

/** The editors whose text is kept. */
export const DRAFTS = {
  envCode: new Draft('sandbox-rl-lab/draft/env-code'),
  taskText: new Draft('sandbox-rl-lab/draft/task-text'),
  taskProgram: new Draft('sandbox-rl-lab/draft/task-program'),
  sandboxCode: new Draft('sandbox-rl-lab/draft/sandbox-code'),
} as const;
