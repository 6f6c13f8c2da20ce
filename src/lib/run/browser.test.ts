import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { DB_NAME, STORAGE_DELETED } from '../storage/db';
import { browserCodeRuns, PageStorage } from './browser';
import { CUSTOM_RUNS, RunCatalog } from './catalog';
import type { CodeRunEvent } from './code-run';
import { memoryTrainer } from './fakes';

describe("the page's code runs", () => {
  it('share the page’s one storage connection; another tab deleting the storage fails the run with a message that stays', async () => {
    const t = memoryTrainer();
    const storage = new PageStorage();
    const heard: string[] = [];
    storage.onClosed((m) => heard.push(m)); // the custom trainings' panel listens too
    const { catalog, run } = browserCodeRuns(t.trainer, storage, {
      notify: () => undefined,
      scored: () => undefined,
      afterStop: async () => undefined,
      afterEnd: async () => undefined,
    });
    const events: CodeRunEvent[] = [];
    run.subscribe((e) => events.push(e));
    const db = await catalog.database();
    expect(await catalog.database()).toBe(db); // one connection
    expect(await new RunCatalog(CUSTOM_RUNS, storage).database()).toBe(db); // for both kinds of run
    expect(await catalog.list()).toEqual([]);
    await new Promise<void>((resolve, reject) => {
      const req = indexedDB.deleteDatabase(DB_NAME);
      req.onsuccess = () => resolve();
      req.onerror = () => reject(req.error);
    });
    expect(events).toContainEqual({ kind: 'error', message: STORAGE_DELETED });
    expect(heard).toEqual([STORAGE_DELETED]);
    // A later failure of the run says the storage went away, not what its writes threw.
    await run.fail('a write failed');
    expect(events.at(-1)).toEqual({ kind: 'error', message: STORAGE_DELETED });
  });
});
