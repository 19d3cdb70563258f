import type Database from 'better-sqlite3';

const NORMAL = 1;

/** A connection's `PRAGMA synchronous` statements, prepared once: `db.pragma` compiles its statement on every call. */
interface SyncStatements {
  readonly level: Database.Statement<[], number>;
  readonly setTo: Map<number, Database.Statement>;
}
const statements = new WeakMap<Database.Database, SyncStatements>();

function syncStatementsOf(db: Database.Database): SyncStatements {
  let found = statements.get(db);
  if (!found) {
    found = { level: db.prepare<[], number>('PRAGMA synchronous').pluck(), setTo: new Map() };
    statements.set(db, found);
  }
  return found;
}

function setSynchronous(db: Database.Database, sync: SyncStatements, level: number): void {
  let statement = sync.setTo.get(level);
  if (!statement) {
    statement = db.prepare(`PRAGMA synchronous = ${Math.trunc(level)}`);
    sync.setTo.set(level, statement);
  }
  statement.run();
}

/**
 * Runs `commit` (one or more SQLite transactions on `db`) with `synchronous = NORMAL`, then puts the connection's
 * setting back, so these commits write the WAL without an fsync of their own. In WAL mode such a commit is atomic
 * and survives a crash of the process; what a power loss can take is the commits since the WAL was last synced,
 * and because WAL frames carry cumulative checksums SQLite then recovers a prefix of the commits, never a hole.
 *
 * So use it only for writes whose loss together with everything committed after them is harmless until the next
 * synchronous commit on the same file: read models with their checkpoint (re-applied from the events), a relay's
 * checkpoint (the events are published again, and consumers drop them by id), or a row that matters only once an
 * event naming it is committed, FULL, on the same connection after it.
 * better-sqlite3 is synchronous, so no other statement runs on the connection in between.
 */
export function withDeferredSync<T>(db: Database.Database, commit: () => T): T {
  const sync = syncStatementsOf(db);
  const level = sync.level.get()!;
  if (level <= NORMAL) return commit();
  setSynchronous(db, sync, NORMAL);
  try {
    return commit();
  } finally {
    setSynchronous(db, sync, level);
  }
}
