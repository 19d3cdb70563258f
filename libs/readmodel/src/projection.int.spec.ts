import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { SqliteEventStore, type RecordedEvent } from '@switchyard/eventstore';
import { SqliteCheckpointStore } from './checkpoints';
import { Projector, type Projection } from './projection';

/** A read model that counts the events it applied, in its own table; `failOn` makes it throw on one event type. */
const counting = (name: string, failOn?: string): Projection & { count(db: Database.Database): number } => ({
  name,
  apply(event: RecordedEvent, db: Database.Database) {
    if (event.type === failOn) throw new Error(`${name} cannot apply ${event.type}`);
    db.prepare(`CREATE TABLE IF NOT EXISTS rm_${name} (id TEXT PRIMARY KEY)`).run();
    db.prepare(`INSERT INTO rm_${name} (id) VALUES (?)`).run(event.id);
  },
  count(db: Database.Database) {
    db.prepare(`CREATE TABLE IF NOT EXISTS rm_${name} (id TEXT PRIMARY KEY)`).run();
    return (db.prepare(`SELECT COUNT(*) AS n FROM rm_${name}`).get() as { n: number }).n;
  },
});

describe('Projector', () => {
  let dir: string;
  let store: SqliteEventStore;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'projector-'));
    store = new SqliteEventStore(path.join(dir, 'events.db'));
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const append = (n: number, type = 'Happened') =>
    store.append(
      `s-${Math.random()}`,
      Array.from({ length: n }, () => ({ type, data: {} })),
      { expectedRevision: 'any' },
    );

  it('reads and commits the read models standing at one checkpoint together, each with its own checkpoint', async () => {
    const [a, b, c] = [counting('a'), counting('b'), counting('c')];
    const commits = countCommits(store.database);
    const projector = new Projector(store.database, store, [a, b, c]);
    expect(projector.groupNames).toEqual([['a', 'b', 'c']]);
    await append(3);
    await projector.catchUp();
    expect(commits.count).toBe(1);
    expect([a, b, c].map((projection) => projection.count(store.database))).toEqual([3, 3, 3]);
    const checkpoints = new SqliteCheckpointStore(store.database);
    expect(['a', 'b', 'c'].map((name) => checkpoints.load(`projection:${name}`))).toEqual(['3', '3', '3']);
  });

  it('gives a read model added since the last start a group of its own, and merges them at the next start', async () => {
    const [a, b] = [counting('a'), counting('b')];
    await append(1);
    await new Projector(store.database, store, [a]).catchUp();
    await append(2);
    const projector = new Projector(store.database, store, [a, b]);
    expect(projector.groupNames).toEqual([['a'], ['b']]);
    await projector.catchUp();
    expect([a.count(store.database), b.count(store.database)]).toEqual([3, 3]);
    expect(new Projector(store.database, store, [a, b]).groupNames).toEqual([['a', 'b']]);
  });

  it('lets a read model that fails a batch go on alone, and the others commit without it', async () => {
    const [good, broken, other] = [counting('good'), counting('broken', 'Poison'), counting('other')];
    const errors: string[] = [];
    const projector = new Projector(store.database, store, [good, broken, other], {
      onError: (_, what) => errors.push(what),
    });
    await append(2);
    await append(1, 'Poison');
    await projector.catchUp().catch(() => undefined);
    expect(projector.groupNames).toEqual([['good', 'other'], ['broken']]);
    expect([good.count(store.database), other.count(store.database), broken.count(store.database)]).toEqual([3, 3, 0]);
    expect(errors).toEqual(['read model broken failed a batch; it is retried on its own']);
    await append(1);
    await projector.catchUp().catch(() => undefined);
    expect([good.count(store.database), other.count(store.database)]).toEqual([4, 4]);
  });

  it('skips a read model another process moved meanwhile, and follows it on its own from where it stands', async () => {
    const [a, b] = [counting('a'), counting('b')];
    const projector = new Projector(store.database, store, [a, b]);
    await append(2);
    // Another process (the operator CLI) brings only `b` up to date first.
    await new Projector(store.database, store, [b]).catchUp();
    await projector.catchUp();
    await projector.catchUp();
    expect([a.count(store.database), b.count(store.database)]).toEqual([2, 2]);
    await append(1);
    await projector.catchUp();
    expect([a.count(store.database), b.count(store.database)]).toEqual([3, 3]);
  });

  it('rebuilds a read model whose rows and checkpoint were deleted while the others stay where they are', async () => {
    const [a, b] = [counting('a'), counting('b')];
    const projector = new Projector(store.database, store, [a, b]);
    await append(3);
    await projector.catchUp();
    store.database.exec("DELETE FROM rm_b; DELETE FROM checkpoints WHERE name = 'projection:b'");
    await projector.catchUp();
    expect([a.count(store.database), b.count(store.database)]).toEqual([3, 3]);
    expect(projector.groupNames).toEqual([['a'], ['b']]);
  });

  it('commits read models without an fsync of their own and puts the connection back to FULL', async () => {
    const seen: number[] = [];
    const spy: Projection = {
      name: 'spy',
      apply: (_, db) => void seen.push(db.pragma('synchronous', { simple: true }) as number),
    };
    await append(1);
    await new Projector(store.database, store, [spy]).catchUp();
    expect(seen).toEqual([1]); // NORMAL inside the batch
    expect(store.database.pragma('synchronous', { simple: true })).toBe(2); // FULL again for the events
  });
});

/** Counts the write transactions the Projector's `db.transaction(...)` functions begin from now on. */
function countCommits(db: Database.Database): { count: number } {
  const counter = { count: 0 };
  const transaction = db.transaction.bind(db);
  vi.spyOn(db, 'transaction').mockImplementation(((fn: (...args: never[]) => unknown) => {
    const wrapped = transaction(fn);
    // The Projector begins its batches with `.immediate` (BEGIN IMMEDIATE); the function's own property is read-only.
    return { immediate: (...args: never[]) => ((counter.count += 1), wrapped.immediate(...args)) };
  }) as typeof db.transaction);
  return counter;
}
