import type { Database } from 'better-sqlite3';

/**
 * Migrations of the event store's own tables, applied in order and recorded in `event_store_schema`. The store
 * does not use `PRAGMA user_version`: a service may keep its read-model tables in the same file and version them
 * its own way. Append a migration to change the schema; never edit one that has shipped.
 */
const migrations: readonly { readonly version: number; readonly sql: string }[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE events (
        position    INTEGER PRIMARY KEY AUTOINCREMENT,
        id          TEXT    NOT NULL UNIQUE,
        stream_id   TEXT    NOT NULL,
        revision    INTEGER NOT NULL,
        type        TEXT    NOT NULL,
        data        TEXT    NOT NULL,
        metadata    TEXT    NOT NULL,
        recorded_at TEXT    NOT NULL,
        UNIQUE (stream_id, revision)
      );
    `,
  },
];

export const currentSchemaVersion = migrations.length;

/**
 * Brings the file up to the current schema. Runs under `BEGIN IMMEDIATE` so that two processes opening the same
 * new file at once do not both create the tables: the second waits for the write lock (busy_timeout), then
 * finds the migrations already recorded.
 */
export function migrate(db: Database): void {
  db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS event_store_schema (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`);
    const row = db.prepare(`SELECT MAX(version) AS version FROM event_store_schema`).get() as {
      version: number | null;
    };
    const applied = row.version ?? 0;
    if (applied > currentSchemaVersion) {
      throw new Error(
        `event store schema version ${applied} is newer than this build knows (${currentSchemaVersion}): upgrade the service`,
      );
    }
    const record = db.prepare(`INSERT INTO event_store_schema (version, applied_at) VALUES (?, ?)`);
    for (const migration of migrations) {
      if (migration.version <= applied) continue;
      db.exec(migration.sql);
      record.run(migration.version, new Date().toISOString());
    }
  }).immediate();
}
