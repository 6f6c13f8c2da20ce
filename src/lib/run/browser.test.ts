import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { DB_NAME, STORAGE_DELETED } from '../storage/db';
import { browserCodeRuns } from './browser';
import type { CodeRunEvent } from './code-run';
import { memoryTrainer } from './fakes';

describe("the page's code runs", () => {
  it('share one storage connection; another tab deleting the storage fails the run with a message that stays', async () => {
    const t = memoryTrainer();
    const { catalog, run } = browserCodeRuns(t.trainer, {
      notify: () => undefined,
      scored: () => undefined,
      afterStop: async () => undefined,
      afterEnd: async () => undefined,
    });
    const events: CodeRunEvent[] = [];
    run.subscribe((e) => events.push(e));
    const db = await catalog.database();
    expect(await catalog.database()).toBe(db); // one connection
    expect(await catalog.list()).toEqual([]);
    await new Promise<void>((resolve, reject) => {
      const req = indexedDB.deleteDatabase(DB_NAME);
      req.onsuccess = () => resolve();
      req.onerror = () => reject(req.error);
    });
    expect(events).toContainEqual({ kind: 'error', message: STORAGE_DELETED });
    // A later failure of the run says the storage went away, not what its writes threw.
    await run.fail('a write failed');
    expect(events.at(-1)).toEqual({ kind: 'error', message: STORAGE_DELETED });
  });
});
