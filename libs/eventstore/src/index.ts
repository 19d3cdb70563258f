import type { EventStore } from './event-store';
import { EventStoreDbEventStore } from './eventstoredb/eventstoredb-event-store';
import { SqliteEventStore } from './sqlite/sqlite-event-store';

export * from './deep-freeze';
export * from './event-store';
export * from './private-files';
export { SqliteEventStore, compareSqlitePositions, type SqliteEventStoreOptions } from './sqlite/sqlite-event-store';
export {
  EventStoreDbEventStore,
  compareEventStoreDbPositions,
  type EventStoreDbEventStoreOptions,
} from './eventstoredb/eventstoredb-event-store';
export type { RetryBackoff } from './subscription/deliver-with-retry';
export { EventUpcasters, SCHEMA_VERSION, schemaVersionOf, withUpcasting, type Upcaster } from './upcasting';

export interface OpenEventStoreOptions {
  /** EventStoreDB connection string (`EVENTSTORE_URL`); absent or empty: the SQLite file. */
  readonly eventStoreUrl?: string;
  /** The SQLite file (under `DATA_DIR`), created with its directory if missing. */
  readonly sqlitePath: string;
}

/**
 * The store the configuration asks for: EventStoreDB when a URL is given, else SQLite. Neither connects
 * eagerly to a server (EventStoreDB connects on first use); readiness checks call `ping()`.
 */
export function openEventStore(options: OpenEventStoreOptions): EventStore {
  if (options.eventStoreUrl) return EventStoreDbEventStore.connect(options.eventStoreUrl);
  return new SqliteEventStore(options.sqlitePath);
}
export {
  migrateStreams,
  readStreamsWithPrefixes,
  streamHasPrefix,
  streamMigrationDone,
  withoutStreams,
  type MovedTable,
  type StreamMigrationOptions,
  type StreamMigrationResult,
} from './stream-migration';
