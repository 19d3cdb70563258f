import type Database from 'better-sqlite3';

const NORMAL = 1;

/**
 * Runs `commit` (one or more SQLite transactions on `db`) with `synchronous = NORMAL`, then puts the connection's
 * setting back, so these commits write the WAL without an fsync of their own. In WAL mode such a commit is atomic
 * and survives a crash of the process; what a power loss can take is the commits since the WAL was last synced,
 * and because WAL frames carry cumulative checksums SQLite then recovers a prefix of the commits, never a hole.
 *
 * So use it only for writes whose loss together with everything committed after them is harmless until the next
 * synchronous commit on the same file: read models with their checkpoint (re-applied from the events), or a row
 * that matters only once an event naming it is committed, FULL, on the same connection after it.
 * better-sqlite3 is synchronous, so no other statement runs on the connection in between.
 */
export function withDeferredSync<T>(db: Database.Database, commit: () => T): T {
  const level = db.pragma('synchronous', { simple: true }) as number;
  if (level <= NORMAL) return commit();
  db.pragma(`synchronous = ${NORMAL}`);
  try {
    return commit();
  } finally {
    db.pragma(`synchronous = ${level}`);
  }
}
