/**
 * Moving streams from one service's store to another's, for a service split out of another (gift cards out of
 * transactions, the vault out of transactions): a data directory written before the split keeps working.
 *
 * `migrateStreams` copies every event of the streams whose id starts with one of the given prefixes from the old
 * SQLite store into the new one, as they were: event id, stream id, revision, type, data, metadata and recorded
 * time, in the old store's log order (the new store gives them new positions, in the same order). The copy and its
 * marker (table `event_store_stream_migrations`, one row per migration name) are committed in ONE transaction of
 * the new store: a crash in the middle leaves nothing of it, and the next start copies everything again; once the
 * marker is there a re-run copies nothing. An event already in the new store under the same id, stream and revision
 * is kept as it is (a copy made by hand, say); one under the same id but elsewhere stops the migration with an error.
 *
 * `withoutStreams` is for the old service afterwards: it wraps its store so that the moved streams are neither read
 * (stream reads, the log, subscriptions: its projections and relay skip them) nor written again.
 *
 * SQLite only (the embedded store and the default of the distributed processes). With EventStoreDB both services
 * share the one server, and nothing has to move.
 */
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { existsSync } from 'node:fs';
import type { EventStore, ReadAllOptions, RecordedEvent, SubscribeOptions, Subscription } from './event-store';

/** Every event of the streams with one of the prefixes, in log order, read from any store (a page at a time). */
export async function readStreamsWithPrefixes(
  store: EventStore,
  prefixes: readonly string[],
  pageSize = 1_000,
): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await store.readAll({ ...(after !== undefined ? { after } : {}), maxCount: pageSize });
    events.push(...page.filter((event) => streamHasPrefix(event.streamId, prefixes)));
    if (page.length < pageSize) return events;
    after = page[page.length - 1]!.position;
  }
}
import { forgetKnownLog } from './sqlite/sqlite-event-store';
import { migrate } from './sqlite/sqlite-schema';

export interface StreamMigrationOptions {
  /** Names the migration in the marker table, e.g. `gift-cards-from-transactions`. */
  readonly name: string;
  /** The old store's SQLite file. A missing file has nothing to move: the migration is recorded as done. */
  readonly sourcePath: string;
  /**
   * The old store's events, when they are not in `sourcePath` (an EventStoreDB: `readStreamsWithPrefixes`); the
   * file then only gives the `tables`.
   */
  readonly sourceEvents?: readonly RecordedEvent[];
  /** The new store's open connection (`SqliteEventStore.database`). */
  readonly target: Database;
  /** Stream id prefixes to move, e.g. `['gift-card-']`. */
  readonly streamPrefixes: readonly string[];
  /**
   * Tables of the old file whose rows move with the streams (e.g. `vault_gift_cards`, the ciphertexts the streams'
   * events name), copied in the same transaction: a table missing in the new file is created as the old file
   * declares it; a row whose key is already there is kept as it is. A table missing in the old file is skipped.
   */
  readonly tables?: readonly (string | MovedTable)[];
  /** Called after each event is copied, inside the transaction (progress logs). */
  readonly onEventCopied?: (copied: number) => void;
}

/** A table of which only some rows move: those `where` (an SQL condition over the old file's columns) holds for. */
export interface MovedTable {
  readonly name: string;
  readonly where: string;
}

export interface StreamMigrationResult {
  /** False when the marker was already there: nothing was read or written. */
  readonly ran: boolean;
  /** Events inserted by this run. */
  readonly copied: number;
  /** Events found already in the new store (same id, stream and revision). */
  readonly alreadyPresent: number;
  /** Rows inserted by this run, by table. */
  readonly rows?: Readonly<Record<string, number>>;
}

interface EventRow {
  id: string;
  stream_id: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
  recorded_at: string;
}

const MARKER_TABLE = `CREATE TABLE IF NOT EXISTS event_store_stream_migrations (
  name TEXT PRIMARY KEY, source TEXT NOT NULL, stream_prefixes TEXT NOT NULL, events INTEGER NOT NULL, completed_at TEXT NOT NULL)`;

/** Whether the migration `name` has completed in the store `target`. */
export function streamMigrationDone(target: Database, name: string): boolean {
  target.exec(MARKER_TABLE);
  return target.prepare(`SELECT 1 FROM event_store_stream_migrations WHERE name = ?`).get(name) !== undefined;
}

export function migrateStreams(options: StreamMigrationOptions): StreamMigrationResult {
  const prefixes = options.streamPrefixes;
  if (prefixes.length === 0 || prefixes.some((prefix) => prefix.length === 0)) {
    throw new TypeError('migrateStreams: give at least one non-empty stream prefix');
  }
  const target = options.target;
  migrate(target);
  if (streamMigrationDone(target, options.name)) return { ran: false, copied: 0, alreadyPresent: 0 };

  const source = existsSync(options.sourcePath)
    ? new BetterSqlite3(options.sourcePath, { readonly: true, fileMustExist: true })
    : null;
  try {
    if (source !== null) source.pragma('busy_timeout = 5000');
    const hasEvents =
      source !== null &&
      source.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'`).get() !== undefined;
    const where = prefixes.map(() => `substr(stream_id, 1, ?) = ?`).join(' OR ');
    const parameters = prefixes.flatMap((prefix) => [prefix.length, prefix]);
    const selectSource =
      source !== null && hasEvents
        ? source.prepare<unknown[], EventRow>(
            `SELECT id, stream_id, revision, type, data, metadata, recorded_at FROM events WHERE ${where} ORDER BY position`,
          )
        : null;
    const findById = target.prepare<[string], { stream_id: string; revision: number }>(
      `SELECT stream_id, revision FROM events WHERE id = ?`,
    );
    const findByRevision = target.prepare<[string, number], { id: string }>(
      `SELECT id FROM events WHERE stream_id = ? AND revision = ?`,
    );
    const insert = target.prepare(
      `INSERT INTO events (id, stream_id, revision, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    const mark = target.prepare(
      `INSERT INTO event_store_stream_migrations (name, source, stream_prefixes, events, completed_at) VALUES (?, ?, ?, ?, ?)`,
    );

    return target
      .transaction((): StreamMigrationResult => {
        // Looked for again under the write lock: another process may have finished the same migration meanwhile.
        if (
          target.prepare(`SELECT 1 FROM event_store_stream_migrations WHERE name = ?`).get(options.name) !== undefined
        ) {
          return { ran: false, copied: 0, alreadyPresent: 0 };
        }
        let copied = 0;
        let alreadyPresent = 0;
        const given = options.sourceEvents?.filter((event) => streamHasPrefix(event.streamId, prefixes)).map(toRow);
        for (const row of given ?? selectSource?.iterate(...parameters) ?? []) {
          const existing = findById.get(row.id);
          if (existing !== undefined) {
            if (existing.stream_id !== row.stream_id || existing.revision !== row.revision) {
              throw new Error(
                `stream migration ${options.name}: event ${row.id} (${row.stream_id}@${row.revision}) is already in the new store as ${existing.stream_id}@${existing.revision}`,
              );
            }
            alreadyPresent += 1;
            continue;
          }
          const occupant = findByRevision.get(row.stream_id, row.revision);
          if (occupant !== undefined) {
            throw new Error(
              `stream migration ${options.name}: ${row.stream_id}@${row.revision} is already taken in the new store by event ${occupant.id}`,
            );
          }
          insert.run(row.id, row.stream_id, row.revision, row.type, row.data, row.metadata, row.recorded_at);
          copied += 1;
          options.onEventCopied?.(copied);
        }
        const rows: Record<string, number> = {};
        for (const table of options.tables ?? []) {
          const moved = typeof table === 'string' ? { name: table, where: '1' } : table;
          rows[moved.name] = source === null ? 0 : copyTable(source, target, moved);
        }
        mark.run(
          options.name,
          options.sourcePath,
          JSON.stringify(prefixes),
          copied + alreadyPresent,
          new Date().toISOString(),
        );
        return { ran: true, copied, alreadyPresent, ...(options.tables ? { rows } : {}) };
      })
      .immediate();
  } finally {
    source?.close();
    // A store on this connection may have read these streams (as absent) before: it reads them again.
    forgetKnownLog(target);
  }
}

const toRow = (event: RecordedEvent): EventRow => ({
  id: event.id,
  stream_id: event.streamId,
  revision: event.revision,
  type: event.type,
  data: JSON.stringify(event.data ?? null),
  metadata: JSON.stringify(event.metadata ?? {}),
  recorded_at: event.recordedAt,
});

/** Copies the rows of `table` (created in `target` as `source` declares it when missing); keeps rows already there. */
function copyTable(source: Database, target: Database, { name: table, where }: MovedTable): number {
  const declared = (db: Database) =>
    db.prepare<[string], { sql: string }>(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`).get(table)
      ?.sql;
  const sql = declared(source);
  if (sql === undefined) return 0;
  if (declared(target) === undefined) target.exec(sql);
  const quoted = `"${table.replaceAll('"', '""')}"`;
  const columns = (source.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as { name: string }[]).map(
    (column) => column.name,
  );
  const list = columns.map((column) => `"${column.replaceAll('"', '""')}"`).join(', ');
  const insert = target.prepare(
    `INSERT OR IGNORE INTO ${quoted} (${list}) VALUES (${columns.map(() => '?').join(', ')})`,
  );
  let inserted = 0;
  for (const row of source.prepare(`SELECT ${list} FROM ${quoted} WHERE ${where}`).raw().iterate() as Iterable<
    unknown[]
  >) {
    inserted += insert.run(...row).changes;
  }
  return inserted;
}

/** True when `streamId` starts with one of `prefixes`. */
export function streamHasPrefix(streamId: string, prefixes: readonly string[]): boolean {
  return prefixes.some((prefix) => streamId.startsWith(prefix));
}

/**
 * The old service's view of its store once streams moved out: reads skip them (a stream read answers empty, the
 * log and subscriptions pass over them; `maxCount` then counts only what is returned after the filter, so a page
 * may be shorter), and an append to one is refused.
 */
export function withoutStreams(store: EventStore, prefixes: readonly string[]): EventStore {
  const moved = (streamId: string): boolean => streamHasPrefix(streamId, prefixes);
  const keep = (events: RecordedEvent[]): RecordedEvent[] => events.filter((event) => !moved(event.streamId));
  return {
    append: (streamId, events, options) => {
      if (moved(streamId)) return Promise.reject(new Error(`stream ${streamId} has moved to another service's store`));
      return store.append(streamId, events, options);
    },
    readStream: async (streamId, options) => (moved(streamId) ? [] : store.readStream(streamId, options)),
    readAll: async (options: ReadAllOptions = {}) => {
      if (options.maxCount === undefined) return keep(await store.readAll(options));
      // A page thinned by the filter is filled up from further on, so that a short page still means the end.
      const kept: RecordedEvent[] = [];
      let after = options.after;
      for (;;) {
        const page = await store.readAll({ after, maxCount: options.maxCount });
        kept.push(...keep(page));
        if (page.length < options.maxCount || kept.length >= options.maxCount || page.length === 0) break;
        after = page[page.length - 1]!.position;
      }
      return kept.slice(0, Math.max(0, Math.trunc(options.maxCount)));
    },
    subscribe: (options: SubscribeOptions): Subscription =>
      store.subscribe({
        ...options,
        handler: async (event) => {
          if (!moved(event.streamId)) await options.handler(event);
        },
      }),
    // Wake-ups pass through: followers of this view read past the moved streams as they do when polling.
    onAppended: (listener) => store.onAppended(listener),
    get appendNotifications() {
      return store.appendNotifications;
    },
    ping: () => store.ping(),
    close: () => store.close(),
  };
}
