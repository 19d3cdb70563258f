import BetterSqlite3, { type Database, type Statement } from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { timeEventStoreAppend } from '@switchyard/metrics';
import { deepFreeze } from '../deep-freeze';
import {
  EventStoreUnavailableError,
  WrongExpectedRevisionError,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription,
} from '../event-store';
import type { RetryBackoff } from '../subscription/deliver-with-retry';
import { assertAppendable, assertValidExpectedRevision } from '../validation';
import { migrate } from './sqlite-schema';
import { PollingSubscription } from './sqlite-subscription';

export interface SqliteEventStoreOptions {
  /**
   * Commit the appends made in the same event-loop turn in one transaction, so they share one fsync; each append
   * is still checked and applied on its own (a conflict fails only that append). Default true: see
   * `bench/eventstore/sqlite-append.bench.ts` for the measurement behind the default.
   */
  readonly groupCommit?: boolean;
  /**
   * `FULL` (default): an append that resolved survives a crash of the process or of the machine. `NORMAL` is
   * only for the benchmark: in WAL mode it may lose the last commits on power loss.
   */
  readonly synchronous?: 'FULL' | 'NORMAL';
  /** How long a writer waits for another process holding the write lock. Default 5 s. */
  readonly busyTimeoutMs?: number;
  /**
   * SQLite's page cache for the connection, in KiB (`PRAGMA cache_size = -<KiB>`). Default 4096 (4 MB) instead of
   * better-sqlite3's build default of ~16 MB (`-16000`), which each connection fills as its file grows (memory that
   * counts in the process's RSS: docs/performance.md, "Memory soak"); pages it drops are still in the OS's cache.
   */
  readonly cacheSizeKib?: number;
  /** How often subscriptions look for appends made by other processes. Default 100 ms. */
  readonly pollIntervalMs?: number;
  /** Events read per query while a subscription catches up. Default 500. */
  readonly subscriptionBatchSize?: number;
  /** Back-off between retries of an event whose handler threw. */
  readonly retryBackoff?: RetryBackoff;
}

interface EventRow {
  position: number;
  id: string;
  stream_id: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
  recorded_at: string;
}

/** An append, serialised and checked for shape, waiting for its transaction. */
interface PendingAppend {
  readonly streamId: string;
  readonly rows: readonly { id: string; type: string; data: string; metadata: string }[];
  readonly expectedRevision: ExpectedRevision;
  readonly resolve: (result: AppendResult) => void;
  readonly reject: (error: unknown) => void;
}

type AppendOutcome =
  | { readonly ok: true; readonly result: AppendResult; readonly recorded: readonly RecordedEvent[] }
  | { readonly ok: false; readonly error: unknown };

/**
 * The embedded event store: one SQLite file (WAL), shared by every process that opens it.
 *
 * Why positions never become visible out of order, even with several writing processes: every append runs in a
 * `BEGIN IMMEDIATE` transaction, which takes SQLite's single write lock before anything is read or written, and
 * holds it until COMMIT. The `position` (AUTOINCREMENT rowid) is allocated inside that transaction. So
 * transactions commit one after another, each allocating positions above all positions of the transactions that
 * committed before it; and a reader's snapshot (WAL read transaction) always contains a whole prefix of commits.
 * A reader that has seen position N can therefore never later discover a new event below N, and polling
 * `position > checkpoint` misses nothing. (PostgreSQL sequences, by contrast, can commit out of order.)
 *
 * better-sqlite3 is synchronous: an append blocks the event loop for its commit (one fsync), or up to
 * `busyTimeoutMs` while another process holds the write lock. Group commit amortises the fsync across all the
 * appends queued in one event-loop turn.
 */
export class SqliteEventStore implements EventStore {
  /** The open connection, for read-model tables kept in the same file. */
  readonly database: Database;

  private readonly ownsDatabase: boolean;
  private readonly groupCommit: boolean;
  private readonly pollIntervalMs: number;
  private readonly subscriptionBatchSize: number;
  private readonly retryBackoff: RetryBackoff;
  private readonly subscriptions = new Set<PollingSubscription>();
  private readonly appendListeners = new Set<() => void>();
  /** Appends through this object are reported; other processes' appends to the same file are not (SQLite cannot signal them). */
  readonly appendNotifications = 'this-instance' as const;
  private pending: PendingAppend[] = [];
  private flushScheduled = false;
  private closed = false;

  private readonly selectStreamRevision: Statement<[string], { revision: number | null }>;
  private readonly insertEvent: Statement<[string, string, number, string, string, string, string]>;
  private readonly selectStream: Statement<[string, number, number], EventRow>;
  private readonly selectAll: Statement<[number, number], EventRow>;
  private readonly commitAppends: (appends: readonly PendingAppend[]) => { outcomes: AppendOutcome[]; seenAt: number };
  private readonly known: KnownLog;

  /**
   * @param source a file path (created with its directory if missing; `':memory:'` for tests), or a connection
   *   the caller opened and keeps ownership of (`close()` then leaves it open). The store sets WAL, `synchronous`,
   *   `busy_timeout` and `cache_size` on it either way and creates or migrates its tables.
   */
  constructor(source: string | Database, options: SqliteEventStoreOptions = {}) {
    const cacheSizeKib = options.cacheSizeKib ?? 4096;
    if (!Number.isInteger(cacheSizeKib) || cacheSizeKib < 1)
      throw new RangeError(`cacheSizeKib must be a positive integer, got ${cacheSizeKib}`);
    if (typeof source === 'string') {
      if (source !== ':memory:' && source !== '' && !source.startsWith('file:'))
        mkdirSync(dirname(source), { recursive: true });
      this.database = new BetterSqlite3(source);
      this.ownsDatabase = true;
    } else {
      this.database = source;
      this.ownsDatabase = false;
    }
    this.groupCommit = options.groupCommit ?? true;
    this.pollIntervalMs = options.pollIntervalMs ?? 100;
    this.subscriptionBatchSize = options.subscriptionBatchSize ?? 500;
    this.retryBackoff = options.retryBackoff ?? {};

    const db = this.database;
    try {
      // busy_timeout first: switching to WAL needs a lock that another process may hold for a moment.
      db.pragma(`busy_timeout = ${Math.trunc(options.busyTimeoutMs ?? 5000)}`);
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
      // Negative: a size in KiB rather than in pages.
      db.pragma(`cache_size = -${cacheSizeKib}`);
      migrate(db);
    } catch (error) {
      if (this.ownsDatabase) db.close();
      throw toUnavailableError(error);
    }

    this.selectStreamRevision = db.prepare<[string], { revision: number | null }>(
      `SELECT MAX(revision) AS revision FROM events WHERE stream_id = ?`,
    );
    this.insertEvent = db.prepare<[string, string, number, string, string, string, string]>(
      `INSERT INTO events (id, stream_id, revision, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.selectStream = db.prepare<[string, number, number], EventRow>(
      `SELECT * FROM events WHERE stream_id = ? AND revision >= ? ORDER BY revision LIMIT ?`,
    );
    this.selectAll = db.prepare<[number, number], EventRow>(
      `SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?`,
    );

    // Each append runs in its own SAVEPOINT (a nested better-sqlite3 transaction) inside the one IMMEDIATE
    // transaction: a conflicting or failing append is rolled back alone, the others still commit.
    const appendOne = db.transaction((append: PendingAppend) => this.applyAppend(append));
    this.known = knownLogOf(db);
    this.commitAppends = db.transaction((appends: readonly PendingAppend[]) => ({
      // What the file held when the write lock was taken: the ends learned from this commit are as of it.
      seenAt: this.known.observe(),
      outcomes: appends.map((append): AppendOutcome => {
        try {
          return { ok: true, ...appendOne(append) };
        } catch (error) {
          // Some errors (disk full, I/O) make SQLite roll back the whole transaction: then nothing of the
          // batch is committed, and every append of it must fail.
          if (!db.inTransaction) throw error;
          return { ok: false, error: toAppendError(error, append) };
        }
      }),
    })).immediate;
  }

  append(
    streamId: string,
    events: readonly NewEvent[],
    options: { expectedRevision: ExpectedRevision },
  ): Promise<AppendResult> {
    return timeEventStoreAppend(
      'sqlite',
      new Promise((resolve, reject) => {
        if (this.closed) throw closedError();
        assertAppendable(streamId, events);
        assertValidExpectedRevision(options.expectedRevision);
        const append: PendingAppend = {
          streamId,
          rows: events.map((event) => ({
            id: event.id ?? randomUUID(),
            type: event.type,
            data: JSON.stringify(event.data ?? null),
            metadata: JSON.stringify(event.metadata ?? {}),
          })),
          expectedRevision: options.expectedRevision,
          resolve,
          reject,
        };
        if (!this.groupCommit) {
          this.commit([append]);
          return;
        }
        this.pending.push(append);
        if (!this.flushScheduled) {
          this.flushScheduled = true;
          // setImmediate runs after the I/O callbacks and microtasks of this turn: every append started in this
          // turn (e.g. by all the requests read from sockets in one poll phase) joins the same commit.
          setImmediate(() => this.flush());
        }
      }),
    );
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    const fromRevision = options.fromRevision ?? 0;
    const seenAt = this.known.observe();
    // A kept state asking what came after it, with nothing since: no query (`KnownLog`).
    if (this.known.endsBefore(streamId, fromRevision)) return [];
    const maxCount = limit(options.maxCount);
    const rows = this.selectStream.all(streamId, fromRevision, maxCount);
    const last = rows[rows.length - 1];
    const toTheEnd = maxCount < 0 || rows.length < maxCount; // -1: no limit
    if (toTheEnd && (last || fromRevision === 0)) this.known.learn(streamId, last?.revision ?? -1, seenAt);
    return rows.map(toRecordedEvent);
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    return this.readAfter(options.after, limit(options.maxCount));
  }

  subscribe(options: SubscribeOptions): Subscription {
    this.assertOpen();
    if (options.after !== undefined) parsePosition(options.after);
    const subscription = new PollingSubscription(
      { readAfter: (after, maxCount) => this.readAfter(after, maxCount) },
      options,
      { pollIntervalMs: this.pollIntervalMs, batchSize: this.subscriptionBatchSize, retryBackoff: this.retryBackoff },
      (finished) => this.subscriptions.delete(finished),
    );
    this.subscriptions.add(subscription);
    return subscription;
  }

  onAppended(listener: () => void): () => void {
    // Each registration is its own entry, so the same function registered twice is stopped once per registration.
    const entry = (): void => listener();
    this.appendListeners.add(entry);
    return () => void this.appendListeners.delete(entry);
  }

  async ping(): Promise<void> {
    this.assertOpen();
    try {
      this.database.prepare('SELECT 1').get();
    } catch (error) {
      throw toUnavailableError(error);
    }
  }

  /** Stops the subscriptions, commits the appends already queued, and closes the file if the store opened it. */
  async close(): Promise<void> {
    if (this.closed) return;
    await Promise.all([...this.subscriptions].map((subscription) => subscription.stop()));
    this.flush();
    this.closed = true;
    if (this.ownsDatabase) this.database.close();
  }

  private readAfter(after: string | undefined, maxCount: number): RecordedEvent[] {
    const from = after === undefined ? 0 : parsePosition(after);
    this.known.observe();
    // A follower that is caught up (a projection, a relay) reads what this connection has just committed: from memory.
    return this.known.eventsAfter(from, maxCount) ?? this.selectAll.all(from, maxCount).map(toRecordedEvent);
  }

  private flush(): void {
    this.flushScheduled = false;
    const appends = this.pending;
    this.pending = [];
    if (appends.length > 0) this.commit(appends);
  }

  private commit(appends: readonly PendingAppend[]): void {
    let committed: { outcomes: AppendOutcome[]; seenAt: number };
    try {
      committed = this.commitAppends(appends);
    } catch (error) {
      const failure = toUnavailableError(error);
      for (const append of appends) append.reject(failure);
      return;
    }
    const { outcomes, seenAt } = committed;
    // Another connection's commit since the lock was taken (after this one's) makes what it learns unknown again.
    this.known.observe();
    this.known.remember(
      outcomes.flatMap((outcome) => (outcome.ok ? outcome.recorded : [])),
      seenAt,
    );
    outcomes.forEach((outcome, index) => {
      const append = appends[index]!;
      if (outcome.ok) {
        this.known.learn(append.streamId, outcome.result.nextExpectedRevision, seenAt);
        append.resolve(outcome.result);
      } else append.reject(outcome.error);
    });
    if (outcomes.some((outcome) => outcome.ok)) {
      for (const subscription of this.subscriptions) subscription.notifyAppended();
      for (const listener of this.appendListeners) {
        try {
          listener();
        } catch {
          // A listener's failure is its own: the appends are committed and their promises settled.
        }
      }
    }
  }

  /** Runs inside the write transaction: check the expected revision, then insert. Throws to roll back. */
  private applyAppend(append: PendingAppend): { result: AppendResult; recorded: RecordedEvent[] } {
    const current = this.selectStreamRevision.get(append.streamId)?.revision ?? null;
    const expected = append.expectedRevision;
    const conflict = expected === 'no_stream' ? current !== null : expected === 'any' ? false : current !== expected;
    if (conflict) throw new WrongExpectedRevisionError(append.streamId, expected, current ?? 'no_stream');

    const recordedAt = new Date().toISOString();
    let revision = current ?? -1;
    let position = 0;
    const recorded: EventRow[] = [];
    for (const row of append.rows) {
      revision += 1;
      const inserted = this.insertEvent.run(
        row.id,
        append.streamId,
        revision,
        row.type,
        row.data,
        row.metadata,
        recordedAt,
      );
      position = Number(inserted.lastInsertRowid);
      recorded.push({ ...row, stream_id: append.streamId, revision, position, recorded_at: recordedAt });
    }
    return {
      result: { nextExpectedRevision: revision, position: String(position) },
      recorded: recorded.map(toRecordedEvent),
    };
  }

  private assertOpen(): void {
    if (this.closed) throw closedError();
  }
}

/** How many streams' ends a connection keeps (the oldest learned goes first). */
const STREAM_ENDS_KEPT = 10_000;
/** How many of its last committed events a connection keeps for the followers that are caught up. */
const RECENT_EVENTS_KEPT = 1_024;

/**
 * What one connection knows of the log without asking the file, while no other connection (another process) has
 * committed to it since (`PRAGMA data_version`, which this connection's own commits leave as it is); all of it is
 * forgotten when one has. One per connection, whichever store objects share it.
 * - Each stream's last revision, so that a read from past it — a decider's kept state (`StreamStates`) asking what
 *   came after it — is answered without a query. Learned from the appends committed on the connection and from reads
 *   that reached a stream's end (-1: no such stream), each as of the file's state it saw.
 * - The events it committed last (`RECENT_EVENTS_KEPT`), in log order: every event committed since the first of them
 *   is there, so a follower that stands at one of them (a projection, a relay, caught up) reads the rest from memory.
 *   Frozen, as every follower gets the same objects.
 */
class KnownLog {
  private readonly ends = new Map<string, number>();
  private recent: RecordedEvent[] = [];
  private recentPositions: number[] = [];
  private readonly dataVersion: Statement<[], number>;
  private version: number | undefined;

  constructor(db: Database) {
    this.dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  }

  /** The file's state as this connection sees it now; what was learned before another connection's commit is dropped. */
  observe(): number {
    const version = this.dataVersion.get() as number;
    if (version !== this.version) {
      this.forget();
      this.version = version;
    }
    return version;
  }

  /** Everything learned: events were written on this connection other than by an append (`migrateStreams`). */
  forget(): void {
    this.ends.clear();
    this.recent = [];
    this.recentPositions = [];
  }

  /** Events this connection has just committed, in log order, as of the state `seenAt` (`observe`). */
  remember(events: readonly RecordedEvent[], seenAt: number): void {
    if (events.length === 0) return;
    if (seenAt !== this.version) {
      // Committed after another connection's commit that this one has not seen: the run of events is broken.
      this.recent = [];
      this.recentPositions = [];
      return;
    }
    for (const event of events) {
      this.recent.push(deepFreeze(event));
      this.recentPositions.push(Number(event.position));
    }
    if (this.recent.length > RECENT_EVENTS_KEPT * 2) {
      this.recent = this.recent.slice(-RECENT_EVENTS_KEPT);
      this.recentPositions = this.recentPositions.slice(-RECENT_EVENTS_KEPT);
    }
  }

  /**
   * The events after `position`, at most `maxCount` (negative: no limit), when `position` is one of the events kept
   * (so every event after it is kept too); else null: ask the file. Call `observe` first.
   */
  eventsAfter(position: number, maxCount: number): RecordedEvent[] | null {
    const positions = this.recentPositions;
    if (positions.length === 0 || position < positions[0]!) return null;
    let low = 0;
    let high = positions.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (positions[middle]! <= position) low = middle + 1;
      else high = middle;
    }
    return this.recent.slice(low, maxCount < 0 ? undefined : low + maxCount);
  }

  /** The stream is known to hold no event at `fromRevision` or after. Call `observe` first. */
  endsBefore(streamId: string, fromRevision: number): boolean {
    const end = this.ends.get(streamId);
    return end !== undefined && end < fromRevision;
  }

  /** The stream's last revision, as of the state `seenAt` (`observe`); ignored when the file has changed since. */
  learn(streamId: string, end: number, seenAt: number): void {
    if (seenAt !== this.version) return;
    this.ends.delete(streamId);
    this.ends.set(streamId, end);
    if (this.ends.size > STREAM_ENDS_KEPT) this.ends.delete(this.ends.keys().next().value as string);
  }
}

const knownLogs = new WeakMap<Database, KnownLog>();
const knownLogOf = (db: Database): KnownLog => {
  let known = knownLogs.get(db);
  if (!known) {
    known = new KnownLog(db);
    knownLogs.set(db, known);
  }
  return known;
};

/** For a writer of the `events` table other than the store's appends, on the store's own connection (`migrateStreams`). */
export const forgetKnownLog = (db: Database): void => knownLogs.get(db)?.forget();

function toRecordedEvent(row: EventRow): RecordedEvent {
  return {
    id: row.id,
    streamId: row.stream_id,
    type: row.type,
    data: JSON.parse(row.data) as unknown,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    revision: row.revision,
    position: String(row.position),
    recordedAt: row.recorded_at,
  };
}

/** Positions of this store are the decimal `position` column. */
function parsePosition(position: string): number {
  if (!/^\d{1,16}$/.test(position))
    throw new TypeError(`not a position of the SQLite event store: ${JSON.stringify(position)}`);
  return Number(position);
}

/** SQLite's LIMIT: a negative value means no limit. */
function limit(maxCount: number | undefined): number {
  return maxCount === undefined ? -1 : Math.max(0, Math.trunc(maxCount));
}

function sqliteCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function toAppendError(error: unknown, append: PendingAppend): unknown {
  if (error instanceof WrongExpectedRevisionError) return error;
  const code = sqliteCode(error);
  if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    if (String((error as Error).message).includes('events.id')) {
      return new Error(`stream ${append.streamId}: an event with one of these ids is already stored`, { cause: error });
    }
  }
  return toUnavailableError(error);
}

function toUnavailableError(error: unknown): unknown {
  if (error instanceof EventStoreUnavailableError || error instanceof WrongExpectedRevisionError) return error;
  const code = sqliteCode(error);
  if (code === undefined || !code.startsWith('SQLITE_')) return error;
  // Busy/locked: another process held the write lock past busy_timeout. Full/I/O: may clear up. The rest
  // (corrupt file, read-only file, not a database) will not get better by retrying.
  const retriable = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|PROTOCOL)/.test(code);
  return new EventStoreUnavailableError(`SQLite event store: ${(error as Error).message} (${code})`, retriable, {
    cause: error,
  });
}

function closedError(): EventStoreUnavailableError {
  return new EventStoreUnavailableError('SQLite event store is closed', false);
}

/** Orders two positions of this store. */
export function compareSqlitePositions(a: string, b: string): number {
  return parsePosition(a) - parsePosition(b);
}
