import type Database from 'better-sqlite3';

/** Where a reader of the event log (a projection, a relay) remembers how far it got. */
export interface CheckpointStore {
  load(name: string): string | undefined;
  save(name: string, position: string): void;
}

/**
 * Checkpoints in the service's local SQLite file, beside its read models, so a projection can move its read
 * model and its checkpoint in one transaction.
 */
export class SqliteCheckpointStore implements CheckpointStore {
  private readonly loadStatement: Database.Statement<[string], { position: string }>;
  private readonly saveStatement: Database.Statement<[string, string]>;

  constructor(readonly db: Database.Database) {
    db.exec('CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, position TEXT NOT NULL)');
    this.loadStatement = db.prepare('SELECT position FROM checkpoints WHERE name = ?');
    this.saveStatement = db.prepare(
      'INSERT INTO checkpoints (name, position) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET position = excluded.position',
    );
  }

  load(name: string): string | undefined {
    return this.loadStatement.get(name)?.position;
  }

  save(name: string, position: string): void {
    this.saveStatement.run(name, position);
  }
}
