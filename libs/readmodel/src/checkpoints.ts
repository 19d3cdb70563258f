import type Database from 'better-sqlite3';
import { withDeferredSync } from './deferred-sync';

/** Where a reader of the event log (a projection, a relay) remembers how far it got. */
export interface CheckpointStore {
  load(name: string): string | undefined;
  save(name: string, position: string): void;
}

export interface SqliteCheckpointStoreOptions {
  /**
   * Saves without an fsync of their own (`withDeferredSync`): for a checkpoint whose loss at a power cut only repeats
   * work that is harmless to repeat. A relay's is one: it publishes the events after it again, and consumers drop
   * them by id. Not for a checkpoint that stands for work done elsewhere that would not be done again.
   */
  readonly deferSync?: boolean;
}

/**
 * Checkpoints in the service's local SQLite file, beside its read models, so a projection can move its read
 * model and its checkpoint in one transaction.
 */
export class SqliteCheckpointStore implements CheckpointStore {
  private readonly loadStatement: Database.Statement<[string], { position: string }>;
  private readonly saveStatement: Database.Statement<[string, string]>;
  private readonly deferSync: boolean;

  constructor(
    readonly db: Database.Database,
    options: SqliteCheckpointStoreOptions = {},
  ) {
    this.deferSync = options.deferSync ?? false;
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
    if (this.deferSync) withDeferredSync(this.db, () => this.saveStatement.run(name, position));
    else this.saveStatement.run(name, position);
  }
}
