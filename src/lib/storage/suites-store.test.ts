import 'fake-indexeddb/auto';
import { openDB } from 'idb';
import { describe, expect, it } from 'vitest';
import { builtInSuites } from '../env/families';
import type { TaskSuite } from '../env/suite';
import { openLabDb } from './db';
import { addTaskToSuite, deleteSuite, getSuite, listSuites, putSuite } from './suites-store';

let n = 0;
const name = () => `suites-${n++}`;
const suite: TaskSuite = { name: 'mine', tasks: builtInSuites(1).heldOut.tasks.slice(0, 3) };

describe('suites store', () => {
  it('saves, lists, replaces by name and deletes suites', async () => {
    const db = await openLabDb(name());
    await putSuite(db, suite);
    await putSuite(db, { ...suite, name: 'other' });
    await putSuite(db, { ...suite, tasks: suite.tasks.slice(0, 1) });
    const all = await listSuites(db);
    expect(all.map((s) => s.name).sort()).toEqual(['mine', 'other']);
    expect(all.find((s) => s.name === 'mine')?.suite.tasks).toHaveLength(1);
    await deleteSuite(db, 'other');
    expect((await listSuites(db)).map((s) => s.name)).toEqual(['mine']);
  });

  it('adds a task to what is saved now, keeping what another tab added meanwhile', async () => {
    // Each tab rebuilt "my tasks" from its own list, read at load: the later Add dropped the other's task.
    const db = await openLabDb(name());
    const [a, b, c] = suite.tasks;
    if (!a || !b || !c) throw new Error('fixture');
    expect(await addTaskToSuite(db, 'my tasks', a)).toEqual({ tasks: 1, replaced: false });
    const other = await openLabDb(db.name); // a second tab's connection
    expect(await addTaskToSuite(other, 'my tasks', b)).toEqual({ tasks: 2, replaced: false });
    expect(await addTaskToSuite(db, 'my tasks', c)).toEqual({ tasks: 3, replaced: false });
    expect(await addTaskToSuite(db, 'my tasks', { ...a, examples: a.examples.slice(0, 1) })).toEqual({
      tasks: 3,
      replaced: true,
    });
    const saved = await getSuite(other, 'my tasks');
    expect(saved?.suite.tasks.map((t) => t.id)).toEqual([b.id, c.id, a.id]);
    await expect(addTaskToSuite(db, 'my tasks', { ...a, hidden: [] })).rejects.toThrow(/suite not saved/);
    expect((await getSuite(db, 'my tasks'))?.suite.tasks).toHaveLength(3);
    other.close();
  });

  it('refuses an invalid suite and stores nothing', async () => {
    const db = await openLabDb(name());
    const bad = { name: 'bad', tasks: [{ ...suite.tasks[0], hidden: [] }] } as unknown as TaskSuite;
    await expect(putSuite(db, bad)).rejects.toThrow(/suite not saved: \$\.tasks\[0\]\.hidden/);
    expect(await listSuites(db)).toEqual([]);
  });

  it('migrates a version-1 database, keeping its runs', async () => {
    const dbName = name();
    const v1 = await openDB(dbName, 1, {
      upgrade(db) {
        db.createObjectStore('runs', { keyPath: 'id' }).createIndex('by-updated', 'updatedAt');
        db.createObjectStore('weights', { keyPath: ['runId', 'version'] }).createIndex('by-run', 'runId');
      },
    });
    await v1.put('runs', {
      id: 'r',
      name: 'old run',
      createdAt: 1,
      updatedAt: 1,
      status: 'created',
      latestVersion: -1,
      config: {},
    });
    v1.close();
    const db = await openLabDb(dbName);
    expect((await db.get('runs', 'r'))?.name).toBe('old run');
    await putSuite(db, suite);
    expect(await listSuites(db)).toHaveLength(1);
  });
});
