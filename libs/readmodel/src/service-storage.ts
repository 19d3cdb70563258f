/**
 * A service's storage: its event store and the local SQLite file of its read models and checkpoints.
 * SQLite mode (default): one file, `<DATA_DIR>/<service>.db`, holds both, so events and read models sit side by
 * side. EventStoreDB mode (`EVENTSTORE_URL`): events in EventStoreDB, read models in `<DATA_DIR>/<service>-read.db`,
 * rebuildable from the store. The directory is created 0700 and the files are 0600 (`privateDatabaseFile` of
 * @switchyard/eventstore).
 */
import Database from 'better-sqlite3';
import { EventStoreDbEventStore, privateDatabaseFile, SqliteEventStore, type EventStore } from '@switchyard/eventstore';

export interface ServiceStorage {
  readonly store: EventStore;
  readonly db: Database.Database;
  close(): Promise<void>;
}

export function openServiceStorage(
  service: string,
  options: { dataDir: string; eventStoreUrl?: string | undefined },
): ServiceStorage {
  if (options.eventStoreUrl) {
    const store = EventStoreDbEventStore.connect(options.eventStoreUrl);
    const db = new Database(privateDatabaseFile(options.dataDir, `${service}-read.db`));
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 5000');
    return {
      store,
      db,
      close: async () => {
        await store.close();
        db.close();
      },
    };
  }
  const store = new SqliteEventStore(privateDatabaseFile(options.dataDir, `${service}.db`));
  return { store, db: store.database, close: () => store.close() };
}
