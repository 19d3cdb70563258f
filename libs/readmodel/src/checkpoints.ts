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
  private readonly loadAllStatement: Database.Statement<[string], { name: string; position: string }>;
  private readonly saveAllStatement: Database.Statement<[string, string]>;
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
    this.loadAllStatement = db.prepare(
      'SELECT name, position FROM checkpoints WHERE name IN (SELECT value FROM json_each(?))',
    );
    // WHERE true: SQLite's upsert after an INSERT … SELECT needs it to parse the ON CONFLICT clause.
    this.saveAllStatement = db.prepare(
      `INSERT INTO checkpoints (name, position) SELECT value, ? FROM json_each(?) WHERE true
       ON CONFLICT(name) DO UPDATE SET position = excluded.position`,
    );
  }

  load(name: string): string | undefined {
    return this.loadStatement.get(name)?.position;
  }

  /** Several checkpoints in one statement (a projection group's members): each name's position, undefined when none. */
  loadAll(names: readonly string[]): Map<string, string | undefined> {
    const positions = new Map<string, string | undefined>(names.map((name) => [name, undefined]));
    if (names.length === 0) return positions;
    for (const row of this.loadAllStatement.all(JSON.stringify(names))) positions.set(row.name, row.position);
    return positions;
  }

  /** `save` of each name at the same position, in one statement. */
  saveAll(names: readonly string[], position: string): void {
    if (names.length === 0) return;
    const save = () => this.saveAllStatement.run(position, JSON.stringify(names));
    if (this.deferSync) withDeferredSync(this.db, save);
    else save();
  }

  save(name: string, position: string): void {
    if (this.deferSync) withDeferredSync(this.db, () => this.saveStatement.run(name, position));
    else this.saveStatement.run(name, position);
  }
}
